"""What each party sees of the scorecards (docs/rules/quality.md#who-sees-what), over rides driven
through the reverse API (``test_scorecards.world``): ``GET /api/v1/reverse/scorecard`` (the partner's
own latest scorecard, exactly as stored; nothing else reachable), the bookings behind each count (the
console's links list exactly as many as the count says), the pages' data and CSV."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import PartnerFactory, bearer
from tests.quality.test_scorecards import world  # noqa: F401  (the fixture)
from tests.servers import LiveServer
from tests.unit.test_partner_openapi import assert_valid
from transfers.api.scorecard_schemas import Scorecard
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, partner_scorecards
from transfers.errors import Invalid
from transfers.jobs import scheduled
from transfers.quality import queries, views
from transfers.quality import service as quality
from transfers.quality.rules import COUNT_NAMES, window

SCORECARD = "/api/v1/reverse/scorecard"
FOUR_DECIMALS = re.compile(r"^\d+(\.\d{1,4})?$")


@pytest.fixture
async def scored(
    world: dict[str, Any],  # noqa: F811
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
) -> dict[str, Any]:
    """The world's partner scored twice: a week before its rides settled (an empty window) and after."""
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    clock.advance(pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))
    as_of = pickup_at + timedelta(hours=12, minutes=1)
    await quality.compute_and_store(db, as_of - timedelta(days=7), now=clock.now(), partner_id=partner_id)
    result = await quality.compute_and_store(db, as_of, now=clock.now(), partner_id=partner_id)
    return {**world, "as_of": as_of, "card": result.cards[0], "airports": result.airports[partner_id]}


async def test_a_partner_reads_its_own_latest_scorecard_and_no_other(
    scored: dict[str, Any], http: httpx.AsyncClient, make_partner: PartnerFactory
) -> None:
    partner_key = scored["rides"]["punctual"].partner_key
    answer = await http.get(SCORECARD, headers=bearer(partner_key))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == scored["card"] and body["partner_id"] == scored["partner_id"]
    Scorecard.model_validate(body)  # the served OpenAPI's shape, strictly
    assert_valid("Scorecard", body)  # and the partner document's (openapi/partner.yaml)
    assert set(body) == {
        "partner_id",
        "as_of",
        "window_days",
        "score",
        "tier",
        "counts",
        "rates",
        "rating",
        "components",
    }
    numbers = [
        *body["rates"].values(),
        *body["components"].values(),
        body["rating"]["average"],
        body["rating"]["bayesian"],
    ]
    assert all(FOUR_DECIMALS.match(str(n)) for n in numbers if n is not None)
    assert (body["score"], body["tier"], body["counts"]["on_time"]) == (87, "PROVISIONAL", 2)

    # another partner's: no parameter names it, and one is refused
    _, other_id, other_key = await make_partner(airports=("LHR",))
    for query in ({"partner_id": str(other_id)}, {"partner_id": str(scored["partner_id"])}, {"id": "1"}):
        refused = await http.get(SCORECARD, params=query, headers=bearer(other_key))
        assert refused.status_code == 422, refused.text
        assert refused.json()["status"] == "Error" and "own" in refused.json()["message"]
    # a partner never scored: 404 NOT_FOUND, never someone else's
    missing = await http.get(SCORECARD, headers=bearer(other_key))
    assert missing.status_code == 404 and missing.json()["code"] == "NOT_FOUND", missing.text
    assert (await http.get(SCORECARD)).status_code == 401
    assert (await http.get(SCORECARD, headers=bearer("tk_live_nonsense"))).status_code == 401


async def test_each_count_lists_exactly_the_bookings_it_counted(scored: dict[str, Any], db: Database) -> None:
    start, end = window(scored["as_of"])
    counted: dict[str, set[int]] = {}
    async with db.read() as conn:
        for name in COUNT_NAMES:
            found = await queries.counted_bookings(conn, name, start, end, scored["partner_id"])
            at_lhr = await queries.counted_bookings(conn, name, start, end, scored["partner_id"], "LHR")
            elsewhere = await queries.counted_bookings(conn, name, start, end, scored["partner_id"], "LTN")
            assert len(found) == scored["card"]["counts"][name], name
            assert found == at_lhr and elsewhere == [], name
            assert found == sorted(found, key=lambda b: (b.created_at, b.id), reverse=True)
            counted[name] = {b.id for b in found}
        with pytest.raises(Invalid, match="not a scorecard count"):
            await queries.counted_bookings(conn, "stars", start, end, scored["partner_id"])
    # the same bookings the world made: on time are the punctual ride and the no-show, not the backdated one
    async with db.read() as conn:
        numbers = {r.reservation_no: name for name, r in scored["rides"].items()}
        rows = await conn.execute(
            select(bookings.c.reservation_no, bookings.c.id).where(bookings.c.reservation_no.in_(numbers))
        )
        ids = {numbers[no]: int(booking_id) for no, booking_id in rows}
    assert counted["on_time"] == {ids["punctual"], ids["no_show"]}
    assert counted["covered"] == {ids["punctual"], ids["backdated"], ids["no_show"]}
    assert counted["partner_cancelled"] == {ids["cancelled"]} and counted["ratings"] == {ids["punctual"]}
    assert ids["disrupted"] not in counted["requests"] and ids["withdrawn"] not in counted["requests"]


async def test_the_pages_data_the_weeks_and_the_csv(scored: dict[str, Any], db: Database) -> None:
    partner_id = scored["partner_id"]
    found = await views.overview(db, partner_id)
    (p,) = found.partners
    assert p.card == scored["card"] and p.airports == [("LHR", scored["airports"]["LHR"])]
    on_time, decline, incident = p.charts
    assert len(on_time.values) == 26 and on_time.labels[-1] == f"{scored['as_of'].day} {scored['as_of']:%b}"
    # the last point is the latest scorecard; the week before had an empty window (null rates: a gap)
    assert (on_time.values[-1], decline.values[-1], incident.values[-1]) == (0.5, 0.0, 0.0)
    assert on_time.values[-2] is None and on_time.target == 0.9
    every = await views.overview(db)
    assert any(v.partner_id == partner_id and v.card == scored["card"] for v in every.partners)
    rows = views.csv_rows(found)
    assert rows[0][:6] == ["partner_id", "partner_name", "airport", "as_of", "score", "tier"]
    whole, lhr = rows[1], rows[2]
    assert whole[2:6] == ["*", scored["card"]["as_of"], "87", "PROVISIONAL"] and lhr[2] == "LHR"
    assert whole[6 : 6 + len(COUNT_NAMES)] == [str(scored["card"]["counts"][n]) for n in COUNT_NAMES]
    assert whole[rows[0].index("on_time_rate")] == "0.5" and whole[rows[0].index("rating_average")] == "2.0"


async def test_a_manual_run_before_03_00_does_not_cancel_the_daily_run(
    db: Database, clock: ShiftedClock, make_partner: PartnerFactory
) -> None:
    """``transfers partners score --partner 7`` at 01:00 stores partner 7's card as today's; the job
    at 03:00 still scores every partner, as of 03:00 (docs/rules/quality.md#computing)."""
    _, partner_id, _ = await make_partner(airports=("LHR",))
    night = datetime.combine(clock.now().date() + timedelta(days=3), time(1, 0), tzinfo=UTC)
    async with db.write() as conn:  # a database kept from an earlier run may hold that day already
        await conn.execute(delete(partner_scorecards).where(partner_scorecards.c.day == night.date().isoformat()))
    await quality.compute_and_store(db, night, now=night, partner_id=partner_id)
    assert await quality.run_daily(db, night + timedelta(hours=1, minutes=59)) == 0  # 02:59: not yet
    at_three = night + timedelta(hours=2, minutes=1)
    assert await quality.run_daily(db, at_three) >= 1
    assert await quality.run_daily(db, at_three + timedelta(hours=1)) == 0  # once a day
    async with db.read() as conn:
        stored = (await queries.latest_with_airports(conn, partner_id))[0]
    assert stored.card["as_of"] == f"{night.date().isoformat()}T03:00:00Z"
