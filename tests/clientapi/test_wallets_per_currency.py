"""Wallets per currency (docs/rules/wallet.md#currencies) through real HTTP: ``GET /wallets``,
``GET /wallet?currency=``, ``/wallet/entries?currency=``, ``WALLET_NOT_FOUND``; a booking debits (and
its cancel refunds) the wallet of its own currency and no other, also when bookings on two wallets of
one client race (both databases; on PostgreSQL with real concurrent transactions)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import update

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body, future_local, search_body
from tests.invariants import check_wallet_invariants
from tests.servers import LiveServer
from transfers.accounting import service as books
from transfers.api import client_schemas as cs
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import wallets
from transfers_sdk import AsyncTransfersClient, InvalidRequest, TransfersClient, WalletBalance

API = "/api/v1/booking-api"
WALLET, WALLETS, ENTRIES = f"{API}/wallet", f"{API}/wallets", f"{API}/wallet/entries"
SEARCH, BOOKING = f"{API}/search", f"{API}/booking"
IATA = "VCE"
VENICE = ZoneInfo("Europe/Rome")


async def search(http: httpx.AsyncClient, key: str) -> dict[str, object]:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": IATA},
        pickup_datetime=future_local(tz=VENICE),
        dropoff_location={"type": "POINT", "lat": 45.4371, "lng": 12.3326, "name": "Piazzale Roma"},
    )
    found = await http.post(SEARCH, json=body, headers=bearer(key))
    assert found.status_code == 200, found.text
    return dict(found.json())


async def balances(http: httpx.AsyncClient, key: str) -> dict[str, str]:
    listed = await http.get(WALLETS, headers=bearer(key))
    assert listed.status_code == 200, listed.text
    cs.WalletList.model_validate(listed.json())
    return {w["currency"]: w["balance"] for w in listed.json()["data"]}


async def test_wallets_their_balances_and_statements_by_currency(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client(balance="412.50")
    await client_service.add_wallet(db, clock, client_id, "GBP", default=False, actor="tests")
    await client_service.add_wallet(db, clock, client_id, "JPY", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("250.00"), actor="tests", currency="GBP")
    await client_service.top_up(db, clock, client_id, Decimal("10010"), actor="tests", currency="JPY")

    listed = await http.get(WALLETS, headers=bearer(key))
    assert listed.json() == {
        "data": [
            {"currency": "EUR", "balance": "412.50", "default": True},
            {"currency": "GBP", "balance": "250.00", "default": False},
            {"currency": "JPY", "balance": "10010", "default": False},
        ]
    }
    assert (await http.get(WALLET, headers=bearer(key))).json() == {
        "pay_type": "wallet",
        "currency": "EUR",
        "balance": "412.50",
    }
    gbp = await http.get(WALLET, params={"currency": "GBP"}, headers=bearer(key))
    assert gbp.json() == {"pay_type": "wallet", "currency": "GBP", "balance": "250.00"}
    cs.Wallet.model_validate(gbp.json())
    entries = (await http.get(ENTRIES, params={"currency": "JPY"}, headers=bearer(key))).json()
    assert [(e["kind"], e["amount"], e["balance_after"], e["currency"]) for e in entries["data"]] == [
        ("top_up", "10010", "10010", "JPY")
    ]
    default = (await http.get(ENTRIES, headers=bearer(key))).json()["data"]
    assert [(e["amount"], e["currency"]) for e in default] == [("412.50", "EUR")]

    for currency in ("USD", "gbp", "XYZ", "GBPX", ""):
        for path in (WALLET, ENTRIES):
            missing = await http.get(path, params={"currency": currency}, headers=bearer(key))
            assert missing.status_code == 404, (path, currency, missing.text)
            assert missing.json()["code"] == "WALLET_NOT_FOUND", missing.text


async def test_a_statement_cursor_belongs_to_its_wallet(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client(balance="1.00")
    await client_service.add_wallet(db, clock, client_id, "GBP", default=False, actor="tests")
    for _ in range(3):
        await client_service.top_up(db, clock, client_id, Decimal("1.00"), actor="tests")
        await client_service.top_up(db, clock, client_id, Decimal("2.00"), actor="tests", currency="GBP")
    first = (await http.get(ENTRIES, params={"limit": 2}, headers=bearer(key))).json()
    assert first["next_cursor"] is not None
    rest = await http.get(ENTRIES, params={"limit": 2, "cursor": first["next_cursor"]}, headers=bearer(key))
    assert rest.status_code == 200 and [e["currency"] for e in rest.json()["data"]] == ["EUR", "EUR"]
    other = await http.get(
        ENTRIES, params={"limit": 2, "cursor": first["next_cursor"], "currency": "GBP"}, headers=bearer(key)
    )
    assert other.status_code == 422 and other.json()["code"] == "INVALID_CURSOR", other.text
    gbp = (await http.get(ENTRIES, params={"limit": 5, "currency": "GBP"}, headers=bearer(key))).json()
    assert [e["amount"] for e in gbp["data"]] == ["2.00", "2.00", "2.00"] and gbp["next_cursor"] is None


async def test_a_reverse_api_client_lists_no_wallets(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client(balance="0", pay_type="reverse_api")
    assert (await http.get(WALLETS, headers=bearer(key))).json() == {"data": []}
    assert (await http.get(WALLET, params={"currency": "GBP"}, headers=bearer(key))).json()["balance"] is None


async def test_a_booking_debits_and_refunds_the_wallet_of_its_currency_only(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    # A GBP agency (its default wallet) that also holds euros; the partner quotes in GBP.
    client_id, key = await make_client(balance="300.00", currency="GBP")
    await client_service.add_wallet(db, clock, client_id, "EUR", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("100.00"), actor="tests", currency="EUR")
    await make_partner(airports=(IATA,), vehicles=default_vehicles("40.00", "GBP"))
    await make_partner(airports=(IATA,), vehicles=default_vehicles("30.00", "EUR"))
    found = await search(http, key)
    assert {v["currency"] for v in found["vehicles"]} == {"GBP"}  # type: ignore[attr-defined]
    created = await http.post(BOOKING, json=booking_body(str(found["search_id"]), 1), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    assert booking["price"]["currency"] == "GBP"
    paid = Decimal(booking["price"]["total"])
    assert await balances(http, key) == {"GBP": f"{Decimal('300.00') - paid}", "EUR": "100.00"}
    reasons = await http.get(f"{API}/cancellation-reasons", headers=bearer(key))
    cancelled = await http.delete(
        BOOKING,
        params={"reservation_no": booking["reservation_no"], "cancellation_id": reasons.json()[0]["id"]},
        headers=bearer(key),
    )
    assert cancelled.status_code == 200, cancelled.text
    assert await balances(http, key) == {"GBP": "300.00", "EUR": "100.00"}
    gbp = (await http.get(ENTRIES, headers=bearer(key))).json()["data"]
    assert [e["kind"] for e in gbp] == ["refund", "debit", "top_up"] and {e["currency"] for e in gbp} == {"GBP"}
    eur = (await http.get(ENTRIES, params={"currency": "EUR"}, headers=bearer(key))).json()["data"]
    assert [e["kind"] for e in eur] == ["top_up"]
    assert await books.ledger_check(db) is None


async def test_bookings_racing_on_two_wallets_of_one_client_never_touch_the_other(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """Two searches of one client, one answered in EUR (its default wallet then), one in GBP (after its
    GBP wallet became the default, with a new key: the principal's currency is the default wallet's);
    then bookings of both race, each wallet holding money for only some of them. Every booking moves
    its own currency's wallet, the refused ones (1101) move nothing, and neither wallet sees the other's."""
    client_id, eur_key = await make_client(balance="125.00")  # 40.00 a booking: three fit
    await client_service.add_wallet(db, clock, client_id, "GBP", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("170.00"), actor="tests", currency="GBP")  # four fit
    await make_partner(airports=(IATA,), vehicles=default_vehicles("40.00", "EUR"))
    await make_partner(airports=(IATA,), vehicles=default_vehicles("40.00", "GBP"))
    eur_search = await search(http, eur_key)
    async with db.write() as conn:  # the default moves to GBP (cleared first: one default per client)
        await conn.execute(update(wallets).where(wallets.c.client_id == client_id).values(is_default=False))
        await conn.execute(
            update(wallets).where(wallets.c.client_id == client_id, wallets.c.currency == "GBP").values(is_default=True)
        )
    gbp_key = (await client_service.issue_client_key(db, clock, client_id, actor="tests")).api_key
    gbp_search = await search(http, gbp_key)
    for found, currency in ((eur_search, "EUR"), (gbp_search, "GBP")):
        vehicles = found["vehicles"]
        assert {v["currency"] for v in vehicles} == {currency}  # type: ignore[attr-defined]

    async def book(found: dict[str, object], key: str) -> tuple[str, int]:
        vehicle = next(v for v in found["vehicles"] if v["price"] == 40.0)  # type: ignore[attr-defined]
        body = booking_body(str(found["search_id"]), vehicle["vehicle_id"])
        answer = await http.post(BOOKING, json=body, headers=bearer(key))
        if answer.status_code == 200:
            return answer.json()["booking"]["price"]["currency"], 200
        assert answer.json()["code"] == 1101, answer.text  # the balance of that wallet, nothing else
        return "", answer.status_code

    outcomes = await asyncio.gather(
        *(book(eur_search, eur_key) for _ in range(6)), *(book(gbp_search, gbp_key) for _ in range(6))
    )
    made = [currency for currency, status in outcomes if status == 200]
    assert sorted(made) == ["EUR"] * 3 + ["GBP"] * 4, outcomes
    assert await balances(http, gbp_key) == {"EUR": "5.00", "GBP": "10.00"}
    for currency, debits in (("EUR", 3), ("GBP", 4)):
        entries = (await http.get(ENTRIES, params={"currency": currency, "limit": 50}, headers=bearer(gbp_key))).json()
        kinds = [e["kind"] for e in entries["data"]]
        assert kinds.count("debit") == debits and {e["currency"] for e in entries["data"]} == {currency}
    await check_wallet_invariants(db)
    assert await books.ledger_check(db) is None


async def test_wallets_per_currency_through_the_sdk(
    service: LiveServer, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client(balance="12.34")
    await client_service.add_wallet(db, clock, client_id, "JPY", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("10010"), actor="tests", currency="JPY")
    async with AsyncTransfersClient(service.url, key) as api:
        assert await api.list_wallets() == [
            WalletBalance("EUR", Decimal("12.34"), True),
            WalletBalance("JPY", Decimal("10010"), False),
        ]
        jpy = await api.get_wallet(currency="JPY")
        assert (jpy.currency, jpy.balance) == ("JPY", Decimal("10010"))
        assert (await api.get_wallet()).currency == "EUR"
        entries = [e async for e in api.iter_wallet_entries(page_size=1, currency="JPY")]
        assert [(e.kind, e.amount, e.currency) for e in entries] == [("top_up", Decimal("10010"), "JPY")]
        with pytest.raises(InvalidRequest) as missing:
            await api.get_wallet(currency="GBP")
        assert missing.value.code == "WALLET_NOT_FOUND"

    def blocking() -> tuple[list[str], Decimal]:  # the blocking client, off the loop that serves the app
        with TransfersClient(service.url, key) as sync_api:
            return [w.currency for w in sync_api.list_wallets()], sync_api.list_wallet_entries(currency="JPY").entries[
                0
            ].amount

    assert await asyncio.to_thread(blocking) == (["EUR", "JPY"], Decimal("10010"))
