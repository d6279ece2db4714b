"""The flight watch (docs/rules/flights.md): checks the due flights, one provider call per flight and date,
and applies the rules (``flights/rules.py``) to every booking sharing it.

One pass (``watch_pass``): claim the due watches that fit the per-minute budget (a lease, so another worker
skips them), ask the provider about each (outside any transaction), then, per watch in one write
transaction: each live booking's decision. A shift moves the pickup (the booked offset kept), writes the
partner's notice (``MessageKind.FLIGHT`` through the delivery engine) and the client's
``booking.pickup_time_changed`` (``lifecycle.update_details_many``: audit row, message and event in the same
transaction); a disruption marks the booking (``booking.flight_disrupted``; cancelling is free from then on);
anything else refreshes the bookings' ``flight_state`` in one statement. A provider failure is logged and
the watch retried at its next slot; it never raises out of the pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog

from transfers.bookings import partner_payloads
from transfers.bookings import repository as booking_repo
from transfers.bookings.lifecycle import DetailChange, update_details_many
from transfers.bookings.models import Booking
from transfers.bookings.resource import flight_view
from transfers.clock import Clock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.delivery import repository as outbox_repo
from transfers.delivery.policy import delivery_deadline
from transfers.errors import NotFound, Unavailable
from transfers.flights import repository as repo
from transfers.flights.providers import FlightProvider, build_provider
from transfers.flights.rules import (
    FlightReport,
    Outcome,
    Watched,
    decide,
    delay_minutes,
    next_check,
)
from transfers.partners.calls import MessageKind
from transfers.reference.airports import local_time
from transfers.reference.flights import FlightStatus

log = structlog.get_logger("transfers.flights")
ACTOR = "system:flights"
LEASE = timedelta(minutes=2)
APPLY_BATCH = 200  # watches whose answers are applied in one write transaction
BUDGET_WINDOW = timedelta(minutes=1)
FAILED_RETRY = timedelta(minutes=5)  # a failed check with no slot left in the schedule
PENDING_RETRY = timedelta(minutes=5)  # a flight whose bookings all await the partner's answer


@dataclass
class PassResult:
    """What one pass did (the job's counts, the bench's figures)."""

    watches: int = 0
    calls: int = 0
    failures: int = 0
    shifted: int = 0
    disrupted: int = 0
    bookings: int = 0
    reservations: list[str] = field(default_factory=list)


async def watch_pass(
    db: Database,
    provider: FlightProvider,
    clock: Clock,
    settings: Settings,
    *,
    limit: int = 100,
    watch_ids: Sequence[int] | None = None,
    answered_before: datetime | None = None,
) -> PassResult:
    """Check every due watch that fits the budget (up to ``limit``; only ``watch_ids`` when given, only those
    the provider has not answered for since ``answered_before`` when given). Never raises for a provider's
    fault."""
    result = PassResult()
    now = clock.now()
    # The budget read first, outside any transaction: when it is spent, nothing would be claimed, so no
    # write transaction is opened for nothing (BEGIN, count, COMMIT through the engine). That is most checks
    # at creation under load: the provider's budget (60 calls a minute by default) is spent within a second
    # of creates on new flights (docs/operations/performance-history.md#create-cpu). The count is not locked in
    # the transaction either: reading it a moment earlier is the same race with other workers.
    spent = await repo.calls_read(db, now - BUDGET_WINDOW, now)
    if min(limit, settings.flight_provider_max_calls_per_minute - spent) <= 0:
        return result
    async with db.write() as conn:
        used = await repo.calls_since(conn, now - BUDGET_WINDOW, now)
        room = min(limit, settings.flight_provider_max_calls_per_minute - used)
        claimed = await repo.claim_due(
            conn, now, limit=room, lease_until=now + LEASE, watch_ids=watch_ids, answered_before=answered_before
        )
    for start in range(0, len(claimed), APPLY_BATCH):
        await check_watches(db, provider, clock, claimed[start : start + APPLY_BATCH], result)
    return result


CREATION_RECHECK = timedelta(minutes=1)


def answered_lately(checked_at: datetime | None, now: datetime) -> bool:
    """The provider answered for this watch less than ``CREATION_RECHECK`` ago: no check at creation."""
    return checked_at is not None and now - checked_at < CREATION_RECHECK


async def check_new(db: Database, clock: Clock, settings: Settings, watch_ids: Sequence[int]) -> None:
    """New bookings' first checks, right after their creation (docs/rules/flights.md#watching), run beside
    the requests (``Services.background``, in batches: every create of one pass of the event loop, or of
    one check's time, together), never in their way. The watches are claimed like a pass claims them (due,
    not leased, within the per-minute budget): when a worker's pass has one, or the budget is spent, it is
    left to the pass as before. Nor is a watch the provider answered for less than ``CREATION_RECHECK`` ago
    claimed: a flight many bookings share is checked at creation at most once a minute (each check reads
    and writes every booking of the flight), and the pass checks the newcomer (it is due)."""
    now = clock.now()
    provider = _Lazy(settings, clock)
    try:
        await watch_pass(
            db,
            provider,
            clock,
            settings,
            limit=len(watch_ids),
            watch_ids=watch_ids,
            answered_before=now - CREATION_RECHECK,
        )
    finally:
        await provider.aclose()


class _Lazy:
    """The configured provider (``build_provider``), built at its first call: most checks at creation under
    load find the budget spent and call no provider, and a real one (an HTTP client) is not free to open."""

    def __init__(self, settings: Settings, clock: Clock) -> None:
        self.name = settings.resolved_flight_provider  # each provider's ``name`` is its setting's value
        self._settings = settings
        self._clock = clock
        self._built: FlightProvider | None = None

    def _provider(self) -> FlightProvider:
        if self._built is None:
            self._built = build_provider(self._settings, self._clock)
        return self._built

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        return await self._provider().report(number, scheduled_arrival, airport_iata)

    async def probe(self) -> str:
        return await self._provider().probe()

    async def aclose(self) -> None:
        if self._built is not None:
            await self._built.aclose()


async def check_watch(
    db: Database, provider: FlightProvider, clock: Clock, watch: repo.Watch, result: PassResult
) -> None:
    """One provider call for one watch, then its bookings; a failure is logged and retried at the next slot."""
    await check_watches(db, provider, clock, [watch], result)


async def check_watches(
    db: Database, provider: FlightProvider, clock: Clock, watches: list[repo.Watch], result: PassResult
) -> None:
    """One provider call per watch (outside any transaction), then every answered watch's bookings in one
    write transaction; a failed call is logged and its watch retried at its next slot."""
    answered: list[tuple[repo.Watch, FlightReport]] = []
    for watch in watches:
        result.watches += 1
        result.calls += 1
        try:
            answered.append((watch, await provider.report(watch.number, watch.scheduled_arrival, watch.airport_iata)))
        except Exception as exc:  # a provider's fault of any kind: logged, retried at the next slot, never raised
            await _failed(db, clock, watch, exc, result)
    if not answered:
        return
    now = clock.now()
    async with db.write() as conn:
        rows = await repo.watched_bookings_of(conn, [watch.id for watch, _ in answered])
        states: list[tuple[int, dict[str, Any]]] = []
        changes: list[DetailChange] = []
        finished: list[dict[str, Any]] = []
        # a watch whose only bookings await the partner's answer (PENDING) moves nothing yet and looks again soon
        waiting = await repo.watches_with_pending(conn, [watch.id for watch, _ in answered if watch.id not in rows])
        for watch, report in answered:
            watched = rows.get(watch.id, [])
            state, unchanged, changed = _apply(watch, report, watched, now, result)
            states += [(booking_id, state) for booking_id in unchanged]
            changes += changed
            slot = next_check(now, _expected(watch, report), report.status) if watched or watch.id in waiting else None
            if slot is not None and not watched:
                slot = min(slot, now + PENDING_RETRY)
            finished.append({"b_id": watch.id, "next_check_at": slot, "checked_at": now, "report": state})
        # every move, disruption and new status of these watches' bookings: each booking's row, audit line,
        # partner notice and client event as ``update_details`` writes them, in bounded multi-row statements
        await update_details_many(conn, changes, actor=ACTOR, now=now)
        await repo.set_flight_states(conn, states)
        await repo.finish_many(conn, finished)


async def _failed(db: Database, clock: Clock, watch: repo.Watch, exc: Exception, result: PassResult) -> None:
    result.failures += 1
    now = clock.now()
    retry_after = getattr(exc, "retry_after", None)
    last = FlightReport(FlightStatus(watch.report["status"])) if watch.report else None
    slot = next_check(now, _expected(watch, None), last.status if last else FlightStatus.SCHEDULED)
    if slot is None:  # past the watch's end: one more try a little later, then it stops by itself
        slot = now + FAILED_RETRY if now < watch.scheduled_arrival + timedelta(hours=26) else None
    if slot is not None and retry_after is not None:
        slot = max(slot, now + timedelta(seconds=float(retry_after)))
    log.warning(
        "flight_check_failed",
        flight=watch.number,
        airport=watch.airport_iata,
        date=watch.local_date,
        error=str(exc)[:300],
        failures=watch.failures + 1,
        next_check_at=slot.isoformat() if slot else None,
    )
    async with db.write() as conn:
        await repo.finish(conn, watch.id, next_check_at=slot, error=f"{type(exc).__name__}: {exc}")


def _expected(watch: repo.Watch, report: FlightReport | None) -> datetime:
    """The arrival the schedule counts from: the provider's estimate, else its schedule, else ours."""
    if report is not None:
        for moment in (report.actual_arrival, report.estimated_arrival, report.scheduled_arrival):
            if moment is not None and abs(moment - watch.scheduled_arrival) <= timedelta(hours=24):
                return moment
    return watch.scheduled_arrival


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def flight_state(number: str, report: FlightReport, scheduled: datetime, now: datetime) -> dict[str, Any]:
    """A booking's ``flight_state``: the report as the BookingResource's ``flight`` shows it (UTC, stored)."""
    return {
        "number": number,
        "status": report.status.value,
        "scheduled_arrival": _iso(report.scheduled_arrival or scheduled),
        "estimated_arrival": _iso(report.estimated_arrival),
        "actual_arrival": _iso(report.actual_arrival),
        "delay_minutes": delay_minutes(report, report.scheduled_arrival or scheduled),
        "terminal": report.terminal,
        "checked_at": now.isoformat(),
    }


def _for_booking(report: FlightReport, scheduled: datetime, booked: datetime) -> FlightReport:
    """The report seen from one booking: the flight's delay applied to the arrival its pickup was booked on
    (its original pickup, so the booked offset is kept whatever it was)."""

    def moved(moment: datetime | None) -> datetime | None:
        if moment is None or moment.tzinfo is None:
            return moment
        return booked + (moment - scheduled)

    return FlightReport(
        report.status, booked, moved(report.estimated_arrival), moved(report.actual_arrival), report.terminal
    )


def _apply(
    watch: repo.Watch,
    report: FlightReport,
    watched: list[tuple[Booking, int]],
    now: datetime,
    result: PassResult,
) -> tuple[dict[str, Any], list[int], list[DetailChange]]:
    """The rules for every live booking of ``watch`` (row-locked by the caller's read). Answers the flight state,
    the bookings whose only change is that state (the caller writes those in one statement) and the other
    bookings' changes (a move, a disruption, a new flight status: the caller writes them all at once)."""
    scheduled = report.scheduled_arrival or watch.scheduled_arrival
    state = flight_state(watch.number, report, scheduled, now)
    unchanged: list[int] = []
    changes: list[DetailChange] = []
    for booking, follow in watched:
        result.bookings += 1
        original = booking.original_pickup_at or booking.pickup_at
        decision = decide(
            Watched(original, booking.pickup_at, original, follow, booking.flight_disrupted_at is not None),
            _for_booking(report, scheduled, original),
        )
        if decision.outcome is Outcome.SHIFT and decision.new_pickup_at is not None:
            changes.append(_shift(booking, decision.new_pickup_at, decision.reason or "", state, now))
            result.shifted += 1
            result.reservations.append(booking.reservation_no)
        elif decision.outcome is Outcome.DISRUPTED:
            changes.append(_disrupt(booking, decision.reason or "", state, now))
            result.disrupted += 1
            result.reservations.append(booking.reservation_no)
        else:
            if decision.outcome is Outcome.IGNORED:
                log.warning("flight_report_ignored", flight=watch.number, reason=decision.reason)
            previous = (booking.flight_state or {}).get("status")
            if previous is not None and previous != state["status"]:
                reason = f"flight {watch.number}: {previous} -> {state['status']}"
                changes.append(DetailChange(booking, {"flight_state": state}, reason))
            else:
                unchanged.append(booking.id)
    return state, unchanged, changes


def _shift(booking: Booking, new_pickup: datetime, reason: str, state: dict[str, Any], now: datetime) -> DetailChange:
    iata = booking.airport_iata
    before = local_time(iata, booking.pickup_at).isoformat()
    after = local_time(iata, new_pickup).isoformat()
    shift = {"shifted_at": now.isoformat(), "previous_pickup_datetime": before, "reason": reason}
    fields = {"pickup_at": new_pickup, "flight_state": {**state, "shift": shift}}
    moved = booking.moved(fields)
    message = outbox_repo.new_message(
        partner_id=booking.partner_id,
        kind=MessageKind.FLIGHT.value,
        payload=notice_payload(moved),
        now=now,
        deadline=max(
            now,
            delivery_deadline(now, min(booking.pickup_at, new_pickup), hours_after_creation=24, hours_before_pickup=0),
        ),
        not_before=None,
        lease_until=None,
    )
    why = f"flight {booking.flight_number}: pickup moved from {before} to {after} ({reason})"
    return DetailChange(booking, fields, why, (message,))


def notice_payload(booking: Booking) -> dict[str, Any]:
    """``PUT /booking/update`` with ``"status": "AMENDED", "reason": "FLIGHT_UPDATE"``: the new pickup, and
    the whole trip as it now is, shaped like an amendment's (docs/rules/flights.md#pickup-moves)."""
    trip = booking.trip
    return {
        "reservation_no": booking.reservation_no,
        "status": "AMENDED",
        "reason": "FLIGHT_UPDATE",
        "changes": {"pickup_datetime": trip.local_pickup.isoformat()},
        "vehicle_id": trip.vehicle.partner_vehicle_id,
        "passenger_info": trip.passenger.contact(),
        "flight_info": partner_payloads.flight_info(trip),
        "trip": partner_payloads.trip_payload(trip),
        "extras": partner_payloads.extras_payload(booking),
    }


def _disrupt(booking: Booking, reason: str, state: dict[str, Any], now: datetime) -> DetailChange:
    why = {"BEYOND_LIMIT": "beyond the partner's limit", "CANCELLED": "cancelled", "DIVERTED": "diverted"}
    return DetailChange(
        booking,
        {"flight_disrupted_at": now, "flight_state": state},
        f"flight {booking.flight_number} disrupted ({why.get(reason, reason)}): cancelling is free from now on",
    )


async def check_now(db: Database, provider: FlightProvider, clock: Clock, reservation_no: str) -> dict[str, Any] | None:
    """``transfers flights check RESERVATION_NO`` (docs/rules/flights.md#watching): check the booking's flight
    now, whatever its schedule, apply the answer to every booking sharing it, and answer the booking's
    ``flight`` as the BookingResource shows it (None when its pickup is not an airport). A provider failure is
    raised (the operator asked), after being recorded on the watch like any failed check."""
    async with db.read() as conn:
        booking = await booking_repo.get_by_reservation(conn, reservation_no.strip().upper())
    if booking is None:
        raise NotFound(f"no booking {reservation_no}")
    if booking.flight_watch_id is not None:
        async with db.write() as conn:
            watch = await repo.get_watch(conn, booking.flight_watch_id)
        if watch is not None:
            result = PassResult()
            await check_watch(db, provider, clock, watch, result)
            if result.failures:
                async with db.read() as conn:
                    failed = await repo.get_watch(conn, watch.id)
                raise Unavailable(f"the flight provider could not answer: {failed.last_error if failed else ''}")
        async with db.read() as conn:
            booking = await booking_repo.get_by_id(conn, booking.id) or booking
    return flight_view(booking.trip)
