"""GET /wallet and GET /wallet/entries (docs/rules/wallet.md): shapes, paging, scoping, refusals, and the
invariants while creates, cancels and top-ups race on one wallet (both databases)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from transfers.api import client_schemas as cs
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

WALLET = "/api/v1/booking-api/wallet"
ENTRIES = "/api/v1/booking-api/wallet/entries"
SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IATA = "BLQ"
ROME = ZoneInfo("Europe/Rome")


async def search(http: httpx.AsyncClient, key: str) -> str:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": IATA},
        pickup_datetime=future_local(tz=ROME),
        dropoff_location={"type": "POINT", "lat": 44.4949, "lng": 11.3426, "name": "Piazza Maggiore"},
    )
    found = await http.post(SEARCH, json=body, headers=bearer(key))
    assert found.status_code == 200, found.text
    return str(found.json()["search_id"])


async def reason_id(http: httpx.AsyncClient, key: str) -> int:
    reasons = await http.get("/api/v1/booking-api/cancellation-reasons", headers=bearer(key))
    return int(reasons.json()[0]["id"])


async def all_entries(http: httpx.AsyncClient, key: str, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        query = {"limit": 7, **params, **({"cursor": cursor} if cursor else {})}
        response = await http.get(ENTRIES, params=query, headers=bearer(key))
        assert response.status_code == 200, response.text
        page = cs.WalletEntryPage.model_validate(response.json())
        found += response.json()["data"]
        cursor = page.next_cursor
        if cursor is None:
            return found
    raise AssertionError("paging never ended")


def assert_statement(balance: str, entries: list[dict[str, Any]]) -> None:
    """docs/rules/wallet.md's invariants on one consistent view: balance = sum, newest balance_after = balance,
    and each entry's balance_after = the previous one's + its amount."""
    assert sum(Decimal(e["amount"]) for e in entries) == Decimal(balance)
    assert entries[0]["balance_after"] == balance
    running = Decimal("0.00")
    for entry in reversed(entries):
        running += Decimal(entry["amount"])
        assert Decimal(entry["balance_after"]) == running, entries


async def test_a_wallet_and_its_statement_through_a_booking_its_cancel_and_a_top_up(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    client_id, key = await make_client(balance="412.50")
    await make_partner(airports=(IATA,), create_status="PENDING")
    wallet = await http.get(WALLET, headers=bearer(key))
    assert wallet.status_code == 200
    assert wallet.json() == {"pay_type": "wallet", "currency": "EUR", "balance": "412.50"}
    opening = (await http.get(ENTRIES, headers=bearer(key))).json()
    assert opening["next_cursor"] is None
    [top_up] = opening["data"]
    assert top_up["kind"] == "top_up" and top_up["amount"] == "412.50" and top_up["balance_after"] == "412.50"
    assert top_up["reservation_no"] is None and top_up["currency"] == "EUR"
    assert top_up["created_at"].endswith("+00:00") and isinstance(top_up["id"], str)

    created = await http.post(BOOKING, json=booking_body(await search(http, key), "1"), headers=bearer(key))
    booking = created.json()["booking"]
    total = Decimal(booking["price"]["total"])
    cancelled = await http.delete(
        BOOKING,
        params={"reservation_no": booking["reservation_no"], "cancellation_id": await reason_id(http, key)},
        headers=bearer(key),
    )
    assert cancelled.status_code == 200, cancelled.text
    await client_service.top_up(db, clock, client_id, Decimal("0.05"), actor="tests")

    entries = await all_entries(http, key)
    assert [e["kind"] for e in entries] == ["top_up", "refund", "debit", "top_up"]
    assert entries[2]["amount"] == f"{-total:.2f}" and entries[1]["amount"] == f"{total:.2f}"
    assert entries[2]["reservation_no"] == entries[1]["reservation_no"] == booking["reservation_no"]
    assert entries[2]["balance_after"] == f"{Decimal('412.50') - total:.2f}"
    balance = (await http.get(WALLET, headers=bearer(key))).json()["balance"]
    assert balance == "412.55"
    assert_statement(balance, entries)


async def test_a_reverse_api_client_has_no_wallet_to_show(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client(balance="0", pay_type="reverse_api")
    assert (await http.get(WALLET, headers=bearer(key))).json() == {
        "pay_type": "reverse_api",
        "currency": None,
        "balance": None,
    }
    assert (await http.get(ENTRIES, headers=bearer(key))).json() == {"data": [], "next_cursor": None}


async def test_paging_filters_and_cursors_bound_to_the_client(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
) -> None:
    client_id, key = await make_client(balance="1.00")
    for cents in range(1, 6):
        await client_service.top_up(db, clock, client_id, Decimal(cents) / 100, actor="tests")
    first = (await http.get(ENTRIES, params={"limit": 2}, headers=bearer(key))).json()
    assert [e["amount"] for e in first["data"]] == ["0.05", "0.04"]
    second = (await http.get(ENTRIES, params={"limit": 2, "cursor": first["next_cursor"]}, headers=bearer(key))).json()
    assert [e["amount"] for e in second["data"]] == ["0.03", "0.02"]
    entries = await all_entries(http, key)
    assert len(entries) == 6
    assert_statement("1.15", entries)
    # created_to is exclusive, created_from inclusive
    cut = entries[2]["created_at"]
    older = (await http.get(ENTRIES, params={"created_to": cut, "limit": 100}, headers=bearer(key))).json()["data"]
    newer = (await http.get(ENTRIES, params={"created_from": cut, "limit": 100}, headers=bearer(key))).json()["data"]
    assert {e["id"] for e in older} | {e["id"] for e in newer} == {e["id"] for e in entries}
    assert not {e["id"] for e in older} & {e["id"] for e in newer}

    _, other_key = await make_client(balance="1.00")
    foreign = await http.get(ENTRIES, params={"cursor": first["next_cursor"]}, headers=bearer(other_key))
    assert foreign.status_code == 422 and foreign.json()["code"] == "INVALID_CURSOR"
    list_cursor = await http.get(
        "/api/v1/booking-api/bookings", params={"cursor": first["next_cursor"]}, headers=bearer(key)
    )
    assert list_cursor.status_code == 422 and list_cursor.json()["code"] == "INVALID_CURSOR"


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"limit": "0"}, "INVALID_FILTER"),
        ({"limit": "101"}, "INVALID_FILTER"),
        ({"limit": "true"}, "INVALID_FILTER"),
        ({"limit": "1.0"}, "INVALID_FILTER"),
        ({"limit": "٣"}, "INVALID_FILTER"),
        ({"limit": ""}, "INVALID_FILTER"),
        ({"created_from": "yesterday"}, "INVALID_FILTER"),
        ({"created_from": "2026-01-01T00:00:00"}, "INVALID_FILTER"),
        ({"created_from": "2026-02-01T00:00:00Z", "created_to": "2026-01-01T00:00:00Z"}, "INVALID_FILTER"),
        ({"cursor": "x" * 5000}, "INVALID_CURSOR"),
        ({"cursor": "bm90LWEtY3Vyc29y"}, "INVALID_CURSOR"),
        ({"cursor": ""}, "INVALID_CURSOR"),
        ({"cursor": "é"}, "INVALID_CURSOR"),
    ],
)
async def test_bad_queries_get_their_code_and_never_a_500(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    params: dict[str, str],
    code: str,
) -> None:
    _, key = await make_client()
    response = await http.get(ENTRIES, params=params, headers=bearer(key))
    assert response.status_code == 422, response.text
    assert response.json()["code"] == code and response.json()["status"] == "Error"


async def test_no_key_no_wallet(http: httpx.AsyncClient) -> None:
    for path in (WALLET, ENTRIES):
        response = await http.get(path)
        assert response.status_code == 401 and response.json()["code"] == "UNAUTHENTICATED"


async def test_the_invariants_hold_while_creates_cancels_and_top_ups_race_on_one_wallet(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    client_id, key = await make_client(balance="300.00")
    await make_partner(airports=(IATA,), create_status="PENDING")
    search_id = await search(http, key)
    reason = await reason_id(http, key)
    stop = asyncio.Event()
    samples: list[tuple[str, str]] = []

    async def create_and_cancel() -> None:
        for _ in range(6):
            created = await http.post(BOOKING, json=booking_body(search_id, "1"), headers=bearer(key))
            if created.status_code == 200:
                await http.delete(
                    BOOKING,
                    params={"reservation_no": created.json()["booking"]["reservation_no"], "cancellation_id": reason},
                    headers=bearer(key),
                )
            else:
                assert created.json()["code"] == 1101, created.text

    async def top_ups() -> None:
        for _ in range(8):
            await client_service.top_up(db, clock, client_id, Decimal("3.33"), actor="tests")

    async def sample() -> None:
        # The newest entry, /wallet, the newest entry again: when no entry was added in between (the
        # same newest id; every balance move adds one in its transaction) the balance is its balance_after.
        for _ in range(2000):  # bounded; keeps sampling until the race ended and a few samples were taken
            if stop.is_set() and len(samples) >= 3:
                break
            first = (await http.get(ENTRIES, params={"limit": 1}, headers=bearer(key))).json()["data"][0]
            before = (await http.get(WALLET, headers=bearer(key))).json()["balance"]
            again = (await http.get(ENTRIES, params={"limit": 1}, headers=bearer(key))).json()["data"][0]
            if first["id"] == again["id"]:
                samples.append((before, first["balance_after"]))
            assert Decimal(before) >= 0

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(create_and_cancel() for _ in range(4)), top_ups())
    stop.set()
    await sampler
    assert samples and all(balance == newest for balance, newest in samples)
    balance = (await http.get(WALLET, headers=bearer(key))).json()["balance"]
    entries = await all_entries(http, key)
    assert_statement(balance, entries)
    debits = [e["reservation_no"] for e in entries if e["kind"] == "debit"]
    refunds = [e["reservation_no"] for e in entries if e["kind"] == "refund"]
    assert len(debits) == len(set(debits)) and len(refunds) == len(set(refunds)) and set(refunds) <= set(debits)
