"""Scheduled jobs run by the worker (docs/rules/states.md, docs/rules/partners.md). Each is safe with several workers
at once:
rows are claimed with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's write lock otherwise),
and every status change is a compare-and-set through ``lifecycle.transition``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import structlog

from transfers.accounting import service as books
from transfers.bookings import operator_actions, partner_updates
from transfers.bookings import repository as bookings_repo
from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.state import BookingStatus
from transfers.client_events.positions_repository import DRIVER_POSITION_KIND
from transfers.deliveries import Dispatcher, send_partner_emails, send_traveller_messages
from transfers.flights import watch as flight_watch
from transfers.flights.providers import build_provider
from transfers.fx import service as fx_service
from transfers.hosted import jobs as hosted_jobs
from transfers.messages import delivery as message_delivery
from transfers.messages import planner as message_planner
from transfers.messages import reminders as message_reminders
from transfers.partners import health_repository
from transfers.quality import service as quality
from transfers.requestlog import repository as request_log_repo
from transfers.ride import repository as ride_repo
from transfers.services import Services
from transfers.webauth import sessions as web_sessions
from transfers.webhooks import repository as webhooks_repo

log = structlog.get_logger("transfers.jobs")
ACTOR = "system:jobs"
BATCH = 100


async def complete_rides(svc: Services) -> int:
    """APPROVED bookings whose pickup was 12 h ago or more become COMPLETED."""
    now = svc.clock.now()
    cutoff = now - timedelta(hours=svc.settings.complete_after_pickup_hours)
    done = 0
    async with svc.db.write() as conn:
        for row in await bookings_repo.lock_approved_before(conn, cutoff, limit=BATCH):
            try:
                async with conn.begin_nested():
                    await partner_updates.complete(conn, row, actor=ACTOR, now=now)
                done += 1
            except ConcurrentChange:
                continue
    return done


async def expire_deliveries(svc: Services) -> int:
    """Undelivered messages past their deadline, each with its kind's effect: the booking of an
    undelivered create FAILs (refunded) (``bookings/partner_answers.py``)."""
    engine = svc.dispatcher or Dispatcher(svc)
    return await engine.expire_overdue(limit=BATCH)


async def reconcile(svc: Services) -> int:
    """Ask the partner about bookings still waiting for approval 30 min after creation, so a lost
    reverse call never leaves a client polling forever."""
    now = svc.clock.now()
    age = timedelta(seconds=svc.settings.reconcile_after_seconds)
    waiting = [BookingStatus.PENDING_APPROVAL.value]
    async with svc.db.write() as conn:
        claimed = await bookings_repo.claim_unsynced(conn, waiting, older_than=now - age, now=now, limit=BATCH)
    for booking_id, reservation_no, partner_id in claimed:
        await _sync_one(svc, booking_id, reservation_no, partner_id)
    return len(claimed)


async def _sync_one(svc: Services, booking_id: int, reservation_no: str, partner_id: int) -> None:
    await operator_actions.sync_booking(svc, booking_id, reservation_no, partner_id, actor=ACTOR)


async def prune_partner_health(svc: Services) -> int:
    """Partner health minutes older than ``TRANSFERS_PARTNER_HEALTH_RETENTION_DAYS`` (30) go, a batch
    at a time (the health page reads only the last hour; a month is kept for looking back)."""
    cutoff = svc.clock.now() - timedelta(days=svc.settings.partner_health_retention_days)
    async with svc.db.write() as conn:
        return await health_repository.prune_before(conn, cutoff, limit=BATCH)


async def prune_web_sessions(svc: Services) -> int:
    """Ended console and portal sessions, and sign-in failures older than a day (docs/rules/console.md)."""
    async with svc.db.write() as conn:
        return await web_sessions.prune(conn, svc.clock.now(), limit=BATCH)


async def prune_client_events(svc: Services) -> int:
    """Client events (and their deliveries) older than ``TRANSFERS_WEBHOOK_RETENTION_DAYS`` (30) with
    nothing pending any more (docs/rules/webhooks.md): the delivery log looks back that far."""
    cutoff = svc.clock.now() - timedelta(days=svc.settings.webhook_retention_days)
    async with svc.db.write() as conn:
        return await webhooks_repo.prune_before(conn, cutoff, limit=BATCH)


async def prune_request_log(svc: Services) -> int:
    """Client API requests older than 7 days (docs/rules/agency-portal.md#request-log), up to
    ``requestlog.repository.PRUNE_BATCH`` per statement: a busy API writes far more than ``BATCH``
    rows a minute."""
    cutoff = svc.clock.now() - request_log_repo.RETENTION
    async with svc.db.write() as conn:
        return await request_log_repo.prune_before(conn, cutoff)


async def prune_ride_positions(svc: Services) -> int:
    """Driver positions 30 days after the ride (docs/rules/ride.md#positions): those of
    bookings picked up more than 30 days and 12 hours ago (the ride is over by pickup + 12 h, when
    the booking completes at the latest). The ride's events are kept as long as the booking."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        pruned = await ride_repo.prune_positions(
            conn, picked_up_before=now - ride_repo.POSITIONS_KEPT, limit=ride_repo.PRUNE_BATCH
        )
        # The client pushes of positions (``client.driver_position``, tried once) are kept a day and
        # then go: a ride writes one per endpoint every 15 s.
        pruned += await webhooks_repo.prune_finished_of_kind(
            conn, DRIVER_POSITION_KIND, finished_before=now - timedelta(days=1), limit=ride_repo.PRUNE_BATCH
        )
    return pruned


async def watch_flights(svc: Services) -> int:
    """docs/rules/flights.md#watching: the due flights checked (one provider call per flight and date, within
    ``TRANSFERS_FLIGHT_PROVIDER_MAX_CALLS_PER_MINUTE``), their bookings' pickups moved or marked disrupted.
    A provider's failure is logged and retried at the next slot (``flights/watch.py``): it never fails
    this job, nor the jobs after it."""
    provider = build_provider(svc.settings, svc.clock)
    try:
        done = await flight_watch.watch_pass(svc.db, provider, svc.clock, svc.settings, limit=BATCH)
    finally:
        await provider.aclose()
    return done.watches


async def close_statements(svc: Services) -> int:
    """Partners' months that have ended become CLOSED statements (docs/rules/statements.md#statements),
    when the database says a close is due (``accounting.service.close_due``: once a month, and again for a
    line committed late into an ended month), whatever this process ran before."""
    return await books.close_due(svc.db, svc.clock.now())


async def fetch_fx_rates(svc: Services) -> int:
    """docs/rules/fx.md#fetch: the ECB's daily file, once a day after 16:00 CET (ecb provider, URL set);
    a failure is logged and the stored rates stay in use until stale. Never more than one file a run."""
    return await fx_service.fetch_if_due(svc.db, svc.clock, svc.settings)


async def score_partners(svc: Services) -> int:
    """docs/rules/quality.md#computing: every partner's scorecard, daily at 03:00 UTC (the first run
    after it), written in one transaction; the partners scored (0 when today's are done)."""
    return await quality.run_daily(svc.db, svc.clock.now())


async def plan_messages(svc: Services) -> int:
    """docs/rules/messages.md#templates: the client events not planned yet read, a batch of ``BATCH``, and the
    messages to travellers they call for written."""
    return await message_planner.plan_pass(svc.db, svc.clock.now(), limit=BATCH)


async def plan_reminders(svc: Services) -> int:
    """docs/rules/messages.md#timing: the 24 h reminders that have come due written (all of them, in
    batches of their own: the drain's count is the bookings read, never a multiple of ``BATCH`` twice)."""
    read = await message_reminders.reminders_pass(svc.db, svc.clock.now())
    return min(read, BATCH - 1)


async def prune_messages(svc: Services) -> int:
    """docs/rules/messages.md#seen: the rendered texts of messages ended 30 days ago emptied; the planner's
    marks past its 2-day window removed."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        emptied = await message_delivery.purge_bodies(conn, now, limit=BATCH)
    return emptied + await message_planner.purge_marks(svc.db, now, limit=BATCH)


MAX_BATCHES = 20  # per job and run: a backlog is worked off in bounded slices, never in one transaction


Job = Callable[[Services], Awaitable[int]]


async def _drain(job: Job, svc: Services) -> int:
    """Run ``job`` batch after batch until a batch comes back short (or MAX_BATCHES), so a backlog
    larger than one batch is still handled in the same run."""
    total = 0
    for _ in range(MAX_BATCHES):
        done = await job(svc)
        total += done
        if done < BATCH:
            break
    return total


JOBS: tuple[tuple[str, str, Job], ...] = (
    ("expire_deliveries", "expired", expire_deliveries),
    ("complete_rides", "completed", complete_rides),
    ("reconcile", "reconciled", reconcile),
    ("prune_partner_health", "health_pruned", prune_partner_health),
    # hosted partners' unaccepted bookings declined; e-mails to partner users sent
    ("auto_decline_hosted", "auto_declined", hosted_jobs.auto_decline),
    ("partner_emails", "emailed", send_partner_emails),
    ("prune_web_sessions", "sessions_pruned", prune_web_sessions),  # docs/rules/console.md
    ("prune_client_events", "events_pruned", prune_client_events),  # docs/rules/webhooks.md
    ("prune_request_log", "requests_pruned", prune_request_log),  # docs/rules/agency-portal.md
    ("watch_flights", "flights_checked", watch_flights),  # docs/rules/flights.md
    ("close_statements", "statements_closed", close_statements),  # docs/rules/statements.md
    ("prune_ride_positions", "positions_pruned", prune_ride_positions),  # docs/rules/ride.md
    ("fetch_fx_rates", "fx_files_fetched", fetch_fx_rates),  # docs/rules/fx.md
    ("score_partners", "partners_scored", score_partners),  # docs/rules/quality.md
    # docs/rules/messages.md: messages to travellers planned from the client events, reminders when due, sent
    ("plan_messages", "messages_planned", plan_messages),
    ("plan_reminders", "reminders_read", plan_reminders),
    ("traveller_messages", "messages_sent", send_traveller_messages),
    ("prune_messages", "messages_pruned", prune_messages),
)


async def run_all(svc: Services) -> dict[str, Any]:
    """Every job once (each drained batch by batch), in order. A job that raises is logged as
    ``job_failed`` with its name, then the error propagates as before (the worker tries again at
    its next interval)."""
    counts: dict[str, Any] = {}
    for name, key, job in JOBS:
        try:
            counts[key] = await _drain(job, svc)
        except Exception:
            log.exception("job_failed", job=name)
            raise
    return counts
