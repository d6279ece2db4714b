"""Idempotency-Key on create (POST) and cancel (DELETE) /booking-api/booking (docs/rules/reliability.md#idempotency):
replays,
reuse with another request, per-client scope, concurrent duplicates, key limits, the 24 h window.
Partners serve LYS."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import func, select, update

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import FakePartner
from tests.helpers import booking_body, future_local, search_body
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, idempotency_keys, ledger_entries, outbox, wallets
from transfers.errors import Code

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IATA = "LYS"
LYON = ZoneInfo("Europe/Paris")
REPLAYED = "Idempotent-Replayed"
CANCELLED = {"status": "Success", "message": "Booking cancelled successfully.", "data": []}


def error(code: int) -> dict[str, Any]:
    return {"status": "Error", "code": code, "message": Code(code).name}


async def search_id_for(http: httpx.AsyncClient, key: str) -> str:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": IATA},
        pickup_datetime=future_local(tz=LYON),
        dropoff_location={"type": "POINT", "lat": 45.764, "lng": 4.8357, "name": "Place Bellecour"},
    )
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    assert response.json()["vehicles"], "the LYS test partner answered"
    search_id: str = response.json()["search_id"]
    return search_id


def raw(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


async def post(http: httpx.AsyncClient, key: str, body: dict[str, Any] | bytes, idem: str | None) -> httpx.Response:
    headers = {**bearer(key), "Content-Type": "application/json"}
    if idem is not None:
        headers["Idempotency-Key"] = idem
    return await http.post(BOOKING, content=body if isinstance(body, bytes) else raw(body), headers=headers)


async def delete(http: httpx.AsyncClient, key: str, idem: str | None, **params: Any) -> httpx.Response:
    headers = bearer(key)
    if idem is not None:
        headers["Idempotency-Key"] = idem
    return await http.delete(BOOKING, params=params, headers=headers)


def replayed(response: httpx.Response) -> bool:
    value: str | None = response.headers.get(REPLAYED)
    assert value in (None, "true")
    return value == "true"


async def footprint(db: Database, client_id: int) -> tuple[int, int, int, Decimal]:
    """(bookings, booking debits, partner create messages, balance) of one client."""
    async with db.read() as conn:
        n_bookings = (
            await conn.execute(select(func.count()).select_from(bookings).where(bookings.c.client_id == client_id))
        ).scalar_one()
        n_debits = (
            await conn.execute(
                select(func.count())
                .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                .where(wallets.c.client_id == client_id, ledger_entries.c.kind == "debit_booking")
            )
        ).scalar_one()
        n_creates = (
            await conn.execute(
                select(func.count())
                .select_from(outbox.join(bookings, bookings.c.id == outbox.c.booking_id))
                .where(bookings.c.client_id == client_id, outbox.c.kind == "booking.create")
            )
        ).scalar_one()
        balance = (await conn.execute(select(wallets.c.balance).where(wallets.c.client_id == client_id))).scalar_one()
    return n_bookings, n_debits, n_creates, Decimal(balance)


async def refunds_of(db: Database, reservation_no: str) -> int:
    async with db.read() as conn:
        joined = ledger_entries.join(bookings, bookings.c.id == ledger_entries.c.booking_id)
        query = (
            select(func.count())
            .select_from(joined)
            .where(bookings.c.reservation_no == reservation_no, ledger_entries.c.kind == "credit_refund")
        )
        return int((await conn.execute(query)).scalar_one())


async def stored_keys(db: Database, client_id: int) -> list[str]:
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(idempotency_keys.c.key)
                .where(idempotency_keys.c.client_id == client_id)
                .order_by(idempotency_keys.c.id)
            )
        ).all()
    return [k for (k,) in rows]


def service_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status", "code", "message"}
    assert body["status"] == "Error" and body["code"] == code
    assert isinstance(body["message"], str) and body["message"]


@pytest.fixture
async def partner(make_partner: PartnerFactory) -> FakePartner:
    fake: FakePartner = (await make_partner(airports=(IATA,)))[0]
    return fake


# ---- POST -------------------------------------------------------------------------------------


async def test_same_key_same_body_replays_the_first_answer(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = booking_body(await search_id_for(http, key), "1")
    first = await post(http, key, body, "create-1")
    assert first.status_code == 200 and not replayed(first)
    assert first.json()["status"] == "Success"
    for _ in range(3):
        again = await post(http, key, body, "create-1")
        assert again.status_code == 200 and replayed(again)
        assert again.content == first.content
        assert again.headers["content-type"].startswith("application/json")
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))
    assert len(partner.calls("/booking/create")) == 1
    assert await stored_keys(db, client_id) == ["create-1"]
    # another key is another request: a second booking
    other = await post(http, key, body, "create-2")
    assert other.status_code == 200 and not replayed(other)
    assert other.json()["booking"]["reservation_no"] != first.json()["booking"]["reservation_no"]
    assert await footprint(db, client_id) == (2, 2, 2, Decimal("20.00"))


async def test_same_key_other_request_is_refused(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    search_id = await search_id_for(http, key)
    body = booking_body(search_id, "1")
    first = await post(http, key, body, "k")
    assert first.status_code == 200
    before = await footprint(db, client_id)
    others: list[dict[str, Any] | bytes] = [
        booking_body(search_id, "2"),
        booking_body(search_id, "1", suitcase=0),
        {**body, "passenger": {**body["passenger"], "name": "Grace"}},
        raw(body).replace(b'"suitcase": 1', b'"suitcase": 1.0'),  # a number compares as written
    ]
    for other in others:
        service_error(await post(http, key, other, "k"), 422, "IDEMPOTENCY_KEY_REUSED")
    headers = {**bearer(key), "Content-Type": "application/json", "Idempotency-Key": "k"}
    with_query = await http.post(BOOKING, params={"x": "1"}, content=raw(body), headers=headers)
    service_error(with_query, 422, "IDEMPOTENCY_KEY_REUSED")
    as_cancel = await delete(
        http, key, "k", reservation_no=first.json()["booking"]["reservation_no"], cancellation_id=1
    )
    service_error(as_cancel, 422, "IDEMPOTENCY_KEY_REUSED")
    assert await footprint(db, client_id) == before
    assert (await get_status(http, key, first.json()["booking"]["reservation_no"])) == "PENDING_APPROVAL"
    # the original request is still replayed
    again = await post(http, key, body, "k")
    assert replayed(again) and again.content == first.content


async def get_status(http: httpx.AsyncClient, key: str, reservation_no: str) -> str:
    response = await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert response.status_code == 200
    status: str = response.json()["status"]
    return status


async def test_a_validation_answer_is_stored_and_replayed(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, clock: ShiftedClock
) -> None:
    client_id, key = await make_client(balance="0.00")
    search_id = await search_id_for(http, key)
    body = booking_body(search_id, "1")
    poor = await post(http, key, body, "poor")
    assert (poor.status_code, poor.json()) == (422, error(1101)) and not replayed(poor)
    bad_phone = booking_body(search_id, "1", passenger={**body["passenger"], "phone": "+4479"})
    invalid = await post(http, key, bad_phone, "bad-phone")
    assert (invalid.status_code, invalid.json()) == (422, error(1009))
    await client_service.top_up(db, clock, client_id, Decimal("500.00"), actor="tests")
    # the stored answer is replayed although the same request would now succeed
    again = await post(http, key, body, "poor")
    assert again.status_code == 422 and replayed(again) and again.content == poor.content
    again = await post(http, key, bad_phone, "bad-phone")
    assert again.status_code == 422 and replayed(again) and again.content == invalid.content
    assert await footprint(db, client_id) == (0, 0, 0, Decimal("500.00"))
    fresh = await post(http, key, body, "rich")
    assert fresh.status_code == 200 and not replayed(fresh)
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("460.00"))


async def test_a_malformed_body_answer_is_stored_too(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory
) -> None:
    client_id, key = await make_client()
    first = await post(http, key, b"{not json", "malformed")
    service_error(first, 400, "MALFORMED_JSON")
    again = await post(http, key, b"{not json", "malformed")
    assert again.status_code == 400 and replayed(again) and again.content == first.content
    assert await stored_keys(db, client_id) == ["malformed"]


async def test_keys_are_scoped_to_the_client(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    a_id, a_key = await make_client(balance="100.00")
    b_id, b_key = await make_client(balance="100.00")
    c_id, c_key = await make_client(balance="100.00")
    a_body = raw(booking_body(await search_id_for(http, a_key), "1"))
    a_first = await post(http, a_key, a_body, "shared-key")
    assert a_first.status_code == 200
    # B uses A's key with its own search: B's own booking
    b_answer = await post(http, b_key, booking_body(await search_id_for(http, b_key), "1"), "shared-key")
    assert b_answer.status_code == 200 and not replayed(b_answer)
    assert b_answer.json()["booking"]["reservation_no"] != a_first.json()["booking"]["reservation_no"]
    # C replays A's exact request: C gets its own answer (A's search is invisible to C), never A's booking
    c_answer = await post(http, c_key, a_body, "shared-key")
    assert (c_answer.status_code, c_answer.json()) == (422, error(1002)) and not replayed(c_answer)
    assert a_first.json()["booking"]["reservation_no"] not in c_answer.text
    assert await footprint(db, a_id) == (1, 1, 1, Decimal("60.00"))
    assert await footprint(db, b_id) == (1, 1, 1, Decimal("60.00"))
    assert await footprint(db, c_id) == (0, 0, 0, Decimal("100.00"))
    a_again = await post(http, a_key, a_body, "shared-key")
    assert replayed(a_again) and a_again.content == a_first.content


async def test_concurrent_duplicates_book_once(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = raw(booking_body(await search_id_for(http, key), "1"))
    answers = await asyncio.gather(*(post(http, key, body, "burst") for _ in range(10)))
    assert {a.status_code for a in answers} <= {200, 409}
    winners = [a for a in answers if a.status_code == 200 and not replayed(a)]
    assert len(winners) == 1
    (winner,) = winners
    for answer in answers:
        if answer.status_code == 409:
            service_error(answer, 409, "IDEMPOTENCY_KEY_IN_USE")
            assert answer.headers["Retry-After"].isdigit()
        else:
            assert answer.content == winner.content
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))
    assert len(partner.calls("/booking/create")) == 1
    later = await post(http, key, body, "burst")  # once the first has finished: the replay
    assert later.status_code == 200 and replayed(later) and later.content == winner.content


async def test_concurrent_requests_with_distinct_keys_book_each(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = raw(booking_body(await search_id_for(http, key), "1"))
    answers = await asyncio.gather(*(post(http, key, body, f"distinct-{i}") for i in range(4)))
    codes = sorted((a.status_code, a.json().get("code")) for a in answers)
    assert codes == [(200, None), (200, None), (422, 1101), (422, 1101)]  # 100.00 pays two at 40.00
    assert await footprint(db, client_id) == (2, 2, 2, Decimal("20.00"))


@pytest.mark.parametrize("idem", ["x" * 256, "x" * 1000, ""])
async def test_a_key_outside_1_to_255_characters_is_invalid(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, idem: str
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = booking_body(await search_id_for(http, key), "1")
    service_error(await post(http, key, body, idem), 400, "IDEMPOTENCY_KEY_INVALID")
    service_error(
        await delete(http, key, idem, reservation_no="TB-NOSUCH0000", cancellation_id=1), 400, "IDEMPOTENCY_KEY_INVALID"
    )
    assert await footprint(db, client_id) == (0, 0, 0, Decimal("100.00"))
    assert await stored_keys(db, client_id) == []


@pytest.mark.parametrize(
    "idem", ["x" * 255, "a", "order 42 / retry #1 ~!@$%^&*()", "550e8400-e29b-41d4-a716-446655440000"]
)
async def test_keys_of_1_to_255_characters_are_accepted(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, idem: str
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = booking_body(await search_id_for(http, key), "1")
    first = await post(http, key, body, idem)
    assert first.status_code == 200 and not replayed(first)
    again = await post(http, key, body, idem)
    assert again.status_code == 200 and replayed(again) and again.content == first.content
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))


async def test_without_a_key_every_request_runs(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    body = booking_body(await search_id_for(http, key), "1")
    first, second = await post(http, key, body, None), await post(http, key, body, None)
    assert first.status_code == second.status_code == 200
    assert not replayed(first) and not replayed(second)
    assert await footprint(db, client_id) == (2, 2, 2, Decimal("20.00"))
    assert await stored_keys(db, client_id) == []


# ---- the 24 h window ------------------------------------------------------------------------


async def test_a_key_is_replayed_for_24_hours_then_new_again(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, clock: ShiftedClock
) -> None:
    client_id, key = await make_client(balance="200.00")
    body = raw(booking_body(await search_id_for(http, key), "1"))
    first = await post(http, key, body, "daily")
    assert first.status_code == 200
    clock.advance(timedelta(hours=23, minutes=59))
    late = await post(http, key, body, "daily")  # the search has expired, but the answer is replayed
    assert late.status_code == 200 and replayed(late) and late.content == first.content
    clock.advance(timedelta(hours=1, minutes=1))
    # 25 h later the key is new: the same request runs again (and its search has expired by now)
    expired = await post(http, key, body, "daily")
    assert (expired.status_code, expired.json()) == (422, error(1002)) and not replayed(expired)
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("160.00"))


async def test_after_24_hours_the_same_key_books_anew(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, clock: ShiftedClock
) -> None:
    client_id, key = await make_client(balance="200.00")
    first = await post(http, key, booking_body(await search_id_for(http, key), "1"), "reused-daily")
    assert first.status_code == 200
    clock.advance(timedelta(hours=25))
    second = await post(http, key, booking_body(await search_id_for(http, key), "2"), "reused-daily")
    assert second.status_code == 200, second.text
    assert not replayed(second)
    old, new = first.json()["booking"], second.json()["booking"]
    assert new["reservation_no"] != old["reservation_no"]  # never the day-old booking
    assert (new["vehicle"]["model"], new["price"]["total"]) == ("Vito", "70.00")
    assert await footprint(db, client_id) == (2, 2, 2, Decimal("90.00"))
    again = await post(http, key, booking_body("ignored", "1"), "reused-daily")
    service_error(again, 422, "IDEMPOTENCY_KEY_REUSED")


def reordered(value: Any) -> Any:
    """The same JSON value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def legacy_fingerprint(method: str, path: str, query: str, body: bytes) -> str:
    """What the code before the SDK's release stored in request_hash (SHA-256 over the raw bytes), written out
    here on purpose: the upgrade test must not take it from the code under test."""
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode(), query.encode(), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


async def test_the_same_meaning_in_other_bytes_is_replayed(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    """Another HTTP library's serialisation of the same body: whitespace, key order, string escapes."""
    client_id, key = await make_client(balance="100.00")
    body = booking_body(
        await search_id_for(http, key),
        "1",
        passenger={"name": "Zoë", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
    )
    first = await post(http, key, json.dumps(body, ensure_ascii=False).encode(), "meaning")
    assert first.status_code == 200 and not replayed(first)
    same_meaning = [
        json.dumps(body).encode(),  # "Zo\u00eb"
        json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(),
        json.dumps(body, indent=4, ensure_ascii=False).encode() + b"\r\n",
        json.dumps(reordered(body), ensure_ascii=False).encode(),
        json.dumps(body, ensure_ascii=False).encode().replace(b'"Lovelace"', b'"\\u004covelace"'),
    ]
    for other in same_meaning:
        again = await post(http, key, other, "meaning")
        assert again.status_code == 200 and replayed(again), other
        assert again.content == first.content
    for other in (
        json.dumps(body).encode().replace(b'"small_bags": 1', b'"small_bags": 1e0'),
        json.dumps(body).encode().replace(b'"small_bags": 1', b'"small_bags": "1"'),
        json.dumps({**body, "small_bags": 2}).encode(),
    ):
        service_error(await post(http, key, other, "meaning"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))


async def test_the_query_compares_by_its_parameters(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    headers = {**bearer(key), "Content-Type": "application/json", "Idempotency-Key": "query"}
    first = await http.post(f"{BOOKING}?b=2&a=1&a=3", content=b"{}", headers=headers)
    assert first.status_code == 422 and not replayed(first)
    for query in ("a=1&a=3&b=2", "a=1&b=2&a=3", "b=%32&a=%31&a=3"):
        again = await http.post(f"{BOOKING}?{query}", content=b"{ }", headers=headers)
        assert again.status_code == 422 and replayed(again) and again.content == first.content, query
    for query in ("a=3&a=1&b=2", "a=1&b=2", "a=1&a=3&b=2&c=", ""):  # a repeated name's values are ordered
        service_error(
            await http.post(f"{BOOKING}?{query}", content=b"{}", headers=headers), 422, "IDEMPOTENCY_KEY_REUSED"
        )


async def test_a_body_that_is_not_json_compares_by_its_bytes(
    http: httpx.AsyncClient, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    first = await post(http, key, b"{not json", "bytes")
    service_error(first, 400, "MALFORMED_JSON")
    service_error(await post(http, key, b"{not  json", "bytes"), 422, "IDEMPOTENCY_KEY_REUSED")
    service_error(await post(http, key, b"{not json ", "bytes"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert replayed(await post(http, key, b"{not json", "bytes"))


async def test_a_key_stored_before_the_upgrade_still_compares(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    """A row written by the code before canonical fingerprints (raw-byte SHA-256) replays a retry of
    the same bytes after the deploy, and still refuses another request. (A retry in other bytes of
    the same meaning is refused for such a row, as it was before; the window closes after 24 h.)"""
    client_id, key = await make_client(balance="100.00")
    body = raw(booking_body(await search_id_for(http, key), "1"))
    first = await post(http, key, body, "old-row")
    assert first.status_code == 200
    async with db.write() as conn:
        await conn.execute(
            update(idempotency_keys)
            .where(
                idempotency_keys.c.client_id == client_id,
                idempotency_keys.c.key == "old-row",
            )
            .values(request_hash=legacy_fingerprint("POST", BOOKING, "", body))
        )
    again = await post(http, key, body, "old-row")
    assert again.status_code == 200 and replayed(again) and again.content == first.content
    service_error(
        await post(http, key, body.replace(b'"suitcase": 1', b'"suitcase": 2'), "old-row"),
        422,
        "IDEMPOTENCY_KEY_REUSED",
    )
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))


# ---- DELETE ------------------------------------------------------------------------------------


async def test_cancel_with_a_key_replays_the_success(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    booking = (await post(http, key, booking_body(await search_id_for(http, key), "1"), None)).json()["booking"]
    reservation_no = booking["reservation_no"]
    first = await delete(http, key, "cancel-1", reservation_no=reservation_no, cancellation_id=1, note="n")
    assert (first.status_code, first.json()) == (200, CANCELLED) and not replayed(first)
    for _ in range(2):
        retry = await delete(http, key, "cancel-1", reservation_no=reservation_no, cancellation_id=1, note="n")
        assert retry.status_code == 200 and replayed(retry) and retry.content == first.content
    reordered_query = await http.delete(
        f"{BOOKING}?note=n&cancellation_id=1&reservation_no={reservation_no}",
        headers={**bearer(key), "Idempotency-Key": "cancel-1"},
    )
    assert replayed(reordered_query) and reordered_query.content == first.content
    without_key = await delete(http, key, None, reservation_no=reservation_no, cancellation_id=1, note="n")
    assert (without_key.status_code, without_key.json()) == (422, error(1204))
    other_reason = await delete(http, key, "cancel-1", reservation_no=reservation_no, cancellation_id=2, note="n")
    service_error(other_reason, 422, "IDEMPOTENCY_KEY_REUSED")
    new_key = await delete(http, key, "cancel-2", reservation_no=reservation_no, cancellation_id=1, note="n")
    assert (new_key.status_code, new_key.json()) == (422, error(1204)) and not replayed(new_key)
    assert await refunds_of(db, reservation_no) == 1
    assert (await footprint(db, client_id))[3] == Decimal("100.00")


async def test_concurrent_cancels_with_one_key_refund_once(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    booking = (await post(http, key, booking_body(await search_id_for(http, key), "1"), None)).json()["booking"]
    params = {"reservation_no": booking["reservation_no"], "cancellation_id": 3}
    answers = await asyncio.gather(*(delete(http, key, "cancel-burst", **params) for _ in range(10)))
    assert {a.status_code for a in answers} <= {200, 409}
    assert sum(1 for a in answers if a.status_code == 200 and not replayed(a)) == 1
    assert all(a.json() == CANCELLED for a in answers if a.status_code == 200)
    assert await refunds_of(db, booking["reservation_no"]) == 1
    assert (await footprint(db, client_id))[3] == Decimal("100.00")


async def test_a_cancel_refusal_is_stored_and_replayed(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    first = await delete(http, key, "cancel-unknown", reservation_no="TB-NOSUCH0000", cancellation_id=1)
    assert (first.status_code, first.json()) == (422, error(1201))
    again = await delete(http, key, "cancel-unknown", reservation_no="TB-NOSUCH0000", cancellation_id=1)
    assert again.status_code == 422 and replayed(again) and again.content == first.content
    assert await stored_keys(db, client_id) == ["cancel-unknown"]


async def test_cancel_retry_after_a_lost_answer_is_success_not_1204(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    """The first cancel committed but its stored answer was lost (a crash before the idempotency row
    was completed): the retry with the same key must still say Success, and refund nothing more."""
    from sqlalchemy import delete

    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("BRU",))
    found = (
        await http.post(
            "/api/v1/booking-api/search",
            headers=bearer(key),
            json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "BRU"}),
        )
    ).json()
    booking = (
        await http.post("/api/v1/booking-api/booking", json=booking_body(found["search_id"]), headers=bearer(key))
    ).json()["booking"]
    params = {"reservation_no": booking["reservation_no"], "cancellation_id": 1}
    headers = {**bearer(key), "Idempotency-Key": "cancel-lost-answer"}
    first = await http.delete("/api/v1/booking-api/booking", params=params, headers=headers)
    assert first.json()["status"] == "Success"
    async with db.write() as conn:  # as if the process died before storing the answer
        await conn.execute(delete(idempotency_keys).where(idempotency_keys.c.client_id == client_id))
    retry = await http.delete("/api/v1/booking-api/booking", params=params, headers=headers)
    assert retry.json() == {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
    other_key = await http.delete(
        "/api/v1/booking-api/booking", params=params, headers={**bearer(key), "Idempotency-Key": "someone-else"}
    )
    assert other_key.json()["code"] == 1204


@pytest.mark.parametrize("idem", ["create-lost-answer", "reservation_no-1", "uq_bookings_reservation_no"])
async def test_create_retry_after_a_lost_answer_answers_the_first_booking(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    partner: FakePartner,
    idem: str,
) -> None:
    """The first create committed but its stored answer was lost: the retry with the same key hits
    the booking's own unique key and answers that booking, charging nothing more, whatever the key
    says (a key naming the reservation-number constraint once made the retry loop take it for a
    number clash: 5 draws, then a 500)."""
    from sqlalchemy import delete as sql_delete

    client_id, key = await make_client(balance="100.00")
    body = booking_body(await search_id_for(http, key), "1")
    first = await post(http, key, body, idem)
    assert first.status_code == 200, first.text
    async with db.write() as conn:  # as if the process died before storing the answer
        await conn.execute(sql_delete(idempotency_keys).where(idempotency_keys.c.client_id == client_id))
    retry = await post(http, key, body, idem)
    assert retry.status_code == 200, retry.text
    assert retry.json()["booking"]["reservation_no"] == first.json()["booking"]["reservation_no"]
    assert await footprint(db, client_id) == (1, 1, 1, Decimal("60.00"))


async def test_a_drawn_reservation_number_already_taken_is_drawn_again(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    partner: FakePartner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clash on the reservation number (2^49 space: practically never) draws a new one; the
    client sees one booking, charged once."""
    from transfers.bookings import service as booking_service

    client_id, key = await make_client(balance="100.00")
    first = (await post(http, key, booking_body(await search_id_for(http, key), "1"), None)).json()["booking"]
    draws = iter([first["reservation_no"], "TB-QQQQQQQQQQ"])
    monkeypatch.setattr(booking_service, "new_reservation_no", lambda: next(draws))
    second = await post(http, key, booking_body(await search_id_for(http, key), "1"), None)
    assert second.status_code == 200, second.text
    assert second.json()["booking"]["reservation_no"] == "TB-QQQQQQQQQQ"
    assert await footprint(db, client_id) == (2, 2, 2, Decimal("20.00"))
