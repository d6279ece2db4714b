"""Scorecards over rides driven through the reverse API with chosen event times
(docs/rules/quality.md): the counts, the evidence rule, the window, the history written all or nothing,
and ``transfers partners score`` through the real entry point."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, update

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.integration.test_cli_clients import cli_env  # noqa: F401  (the fixture)
from tests.integration.test_cli_operators import run_cli
from tests.ride.conftest import BOOKING, REVERSE, SEARCH, Ride
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, partner_scorecards
from transfers.jobs import scheduled
from transfers.quality import repository
from transfers.quality import service as quality

DRIVER = {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"}
MIN = timedelta(minutes=1)


async def book(http: httpx.AsyncClient, client_key: str, partner_key: str, *, approve: bool = True) -> str:
    found = await http.post(SEARCH, json=search_body(), headers=bearer(client_key))
    assert found.status_code == 200, found.text
    search = found.json()
    created = await http.post(
        BOOKING, json=booking_body(search["search_id"], search["vehicles"][0]["vehicle_id"]), headers=bearer(client_key)
    )
    assert created.status_code == 200, created.text
    reservation_no: str = created.json()["booking"]["reservation_no"]
    if approve:
        body = {"reservation_no": reservation_no, "status": "APPROVED", "driver_info": DRIVER}
        answer = await http.put(f"{REVERSE}/update", json=body, headers=bearer(partner_key))
        assert answer.status_code == 200, answer.text
    return reservation_no


async def recorded(ride: Ride, kind: str, occurred: timedelta) -> None:
    answer = await ride.event(kind, ride.pickup_at + occurred)
    assert answer.status_code == 200, answer.text


@pytest.fixture
async def world(
    http: httpx.AsyncClient,
    clock: ShiftedClock,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> dict[str, Any]:
    """One partner's bookings, all picked up at the same moment:

    * ``punctual``: arrives 2 min after the pickup, reported as it happens, dropped off: on time, covered;
      rated 2 stars by the agency;
    * ``backdated``: really arrives 40 min late but reports "pickup + 1 min" then: not on time, covered;
    * ``no_show``: departed, arrived on time, customer no-show: on time, covered;
    * ``patchy``: only the drop-off reported: a ride, neither on time nor covered;
    * ``cancelled``: approved, then cancelled by the partner;
    * ``withdrawn``: cancelled by the client before the partner answered: no request;
    * ``disrupted``: its flight disrupted: left out entirely (it would count as a cancel).
    """
    _, client_key = await make_client()
    _, partner_id, partner_key = await make_partner(airports=("LHR",), create_status="PENDING")
    names = ("punctual", "backdated", "no_show", "patchy", "cancelled", "disrupted")
    reservations = {name: await book(http, client_key, partner_key) for name in names}
    reservations["withdrawn"] = await book(http, client_key, partner_key, approve=False)
    withdrawn = await http.delete(
        BOOKING, params={"reservation_no": reservations["withdrawn"], "cancellation_id": 1}, headers=bearer(client_key)
    )
    assert withdrawn.status_code == 200, withdrawn.text
    info = (await http.get(f"{REVERSE}/info/{reservations['punctual']}", headers=bearer(partner_key))).json()
    pickup_at = datetime.fromisoformat(info["booking_details"]["pickup_datetime"])
    rides = {
        name: Ride(http, clock, no, 0, client_key, partner_id, partner_key, pickup_at)
        for name, no in reservations.items()
    }
    for name in ("cancelled", "disrupted"):
        body = {"reservation_no": reservations[name], "status": "CANCELLED", "cancel_reason": "no car"}
        answer = await http.put(f"{REVERSE}/update", json=body, headers=bearer(partner_key))
        assert answer.status_code == 200, answer.text
    async with db.write() as conn:  # the flight watch's mark, set directly (docs/rules/flights.md#disruption)
        await conn.execute(
            update(bookings)
            .where(bookings.c.reservation_no == reservations["disrupted"])
            .values(flight_disrupted_at=pickup_at - timedelta(hours=3))
        )

    punctual, backdated, no_show, patchy = (rides[n] for n in ("punctual", "backdated", "no_show", "patchy"))
    punctual.at(-30 * MIN)
    for r in (punctual, backdated, no_show):
        await recorded(r, "DRIVER_DEPARTED_TO_PICKUP", -31 * MIN)
    punctual.at(2 * MIN + 10 * timedelta(seconds=1))
    await recorded(punctual, "DRIVER_ARRIVED_AT_PICKUP", 2 * MIN)
    await recorded(no_show, "DRIVER_ARRIVED_AT_PICKUP", 1 * MIN)
    punctual.at(10 * MIN)
    await recorded(punctual, "DRIVER_DEPARTED_TO_DROPOFF", 9 * MIN)
    punctual.at(41 * MIN)  # 40 minutes late, it says it came at pickup + 1 min
    await recorded(backdated, "DRIVER_ARRIVED_AT_PICKUP", 1 * MIN)
    await recorded(backdated, "DRIVER_DEPARTED_TO_DROPOFF", 41 * MIN - timedelta(seconds=30))
    punctual.at(70 * MIN)
    await recorded(punctual, "DRIVER_ARRIVED_AT_DROPOFF", 69 * MIN)
    await recorded(no_show, "CUSTOMER_NO_SHOW", 69 * MIN)
    rated = await http.post(
        f"{BOOKING}/rating",
        params={"reservation_no": punctual.reservation_no},
        json={"stars": 2},
        headers=bearer(client_key),
    )
    assert rated.status_code == 201, rated.text
    punctual.at(100 * MIN)
    await recorded(backdated, "DRIVER_ARRIVED_AT_DROPOFF", 99 * MIN)
    await recorded(patchy, "DRIVER_ARRIVED_AT_DROPOFF", 99 * MIN)
    return {"partner_id": partner_id, "pickup_at": pickup_at, "rides": rides}


async def test_the_counts_the_score_and_the_window(
    world: dict[str, Any], db: Database, clock: ShiftedClock, service: LiveServer
) -> None:
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    clock.advance(pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))  # the no-show's booking completes at pickup + 12 h
    as_of = pickup_at + timedelta(hours=12, minutes=1)
    result = await quality.compute(db, as_of, partner_id)
    (card,) = result.cards
    assert card["counts"] == {
        "requests": 5,  # punctual, backdated, no_show, patchy, cancelled
        "declined": 0,
        "partner_cancelled": 1,
        "driver_no_shows": 0,
        "rides": 4,
        "on_time": 2,  # punctual and no_show: backdated's arrival reached us 40 min after it "occurred"
        "covered": 3,  # patchy reported only its drop-off
        "partner_incidents": 0,
        "ratings": 1,
    }
    # reliability 23.4/25, on_time 19/24, coverage 19/24, incident_free 23.6/24, rating ((2 + 45)/11 - 1)/4:
    # 32.76 + 19.7917 + 11.875 + 14.75 + 8.1818 = 87.3485
    assert card["components"] == {
        "reliability": 0.936,
        "on_time": 0.7917,
        "coverage": 0.7917,
        "incident_free": 0.9833,
        "rating": 0.8182,
    }
    assert card["rating"] == {"count": 1, "average": 2.0, "bayesian": 4.2727}
    assert (card["score"], card["tier"]) == (87, "PROVISIONAL")
    assert card["rates"] == {"decline": 0.0, "on_time": 0.5, "coverage": 0.75, "incident": 0.0}
    assert result.airports[partner_id]["LHR"]["counts"] == card["counts"]
    # the window ends 12 h before as_of: a minute earlier, the pickup is not in it yet
    before = await quality.compute(db, pickup_at + timedelta(hours=12), partner_id)
    assert before.cards[0]["counts"]["requests"] == 0 and before.cards[0]["score"] == 91
    # and 90 days later it has left it
    after = await quality.compute(db, as_of + timedelta(days=90), partner_id)
    assert after.cards[0]["counts"]["requests"] == 0
    # the same inputs, the same result
    assert (await quality.compute(db, as_of, partner_id)).cards == [card]


async def test_the_daily_job_keeps_a_history_and_a_killed_run_leaves_the_last_day(
    world: dict[str, Any], db: Database, clock: ShiftedClock, service: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    svc = svc_of(service)
    day_after = datetime.combine(pickup_at.date() + timedelta(days=1), time(2, 59), tzinfo=UTC)
    async with db.write() as conn:  # a database kept from an earlier run may hold these days already
        days = [(day_after + timedelta(days=n)).date().isoformat() for n in (0, 1, 401)]
        await conn.execute(delete(partner_scorecards).where(partner_scorecards.c.day.in_(days)))
    clock.advance(day_after - clock.now())
    await scheduled.complete_rides(svc)
    assert await scheduled.score_partners(svc) == 0  # before 03:00 UTC: not yet
    clock.advance(timedelta(minutes=2))
    assert await scheduled.score_partners(svc) >= 1
    assert await scheduled.score_partners(svc) == 0  # once a day
    async with db.read() as conn:
        first = (await repository.latest(conn, partner_id))[partner_id]
        by_airport = await repository.history(conn, partner_id, "LHR")
    assert first.day == (day_after.date()).isoformat() and first.card["counts"]["rides"] == 4
    assert first.card["as_of"] == f"{first.day}T03:00:00Z"
    assert [h.card["counts"]["requests"] for h in by_airport] == [5]

    # The next day's run dies in the middle of its write: the first day's scorecard stays the latest.
    real = repository.replace_day

    async def dies_half_way(*args: Any, **kwargs: Any) -> None:
        await real(*args, **kwargs)
        raise RuntimeError("killed")

    monkeypatch.setattr(repository, "replace_day", dies_half_way)
    clock.advance(timedelta(days=1))
    with pytest.raises(RuntimeError):
        await scheduled.score_partners(svc)
    async with db.read() as conn:
        assert (await repository.latest(conn, partner_id))[partner_id].day == first.day
    monkeypatch.setattr(repository, "replace_day", real)
    assert await scheduled.score_partners(svc) >= 1
    # 400 days later the first day is pruned by the run that writes a new one
    clock.advance(timedelta(days=400))
    await scheduled.score_partners(svc)
    async with db.read() as conn:
        days = [h.day for h in await repository.history(conn, partner_id)]
    assert first.day not in days and len(days) == 2


async def test_the_cli_computes_as_of_an_instant(
    world: dict[str, Any],
    cli_env: dict[str, str],  # noqa: F811
    clock: ShiftedClock,
    service: LiveServer,
) -> None:
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    clock.advance(pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))
    as_of = (pickup_at + timedelta(hours=12, minutes=1)).isoformat().replace("+00:00", "Z")
    done = await run_cli(cli_env, "partners", "score", "--partner", str(partner_id), "--as-of", as_of, "--json")
    assert done.exit_code == 0, done.output
    (card,) = json.loads(done.output)
    assert (card["score"], card["counts"]["on_time"], card["as_of"]) == (87, 2, as_of)
    assert card["airports"]["LHR"]["counts"]["rides"] == 4
    table = await run_cli(cli_env, "partners", "score", "--partner", str(partner_id), "--as-of", as_of)
    assert table.exit_code == 0 and "PROVISIONAL" in table.output, table.output
    bad = await run_cli(cli_env, "partners", "score", "--as-of", "2026-11-29T03:00")
    assert bad.exit_code == 2 and "offset" in bad.output, bad.output
    missing = await run_cli(cli_env, "partners", "score", "--partner", "999999999", "--as-of", "2026-11-29")
    assert missing.exit_code == 1, missing.output
