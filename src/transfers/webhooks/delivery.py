"""Delivers client events to webhook endpoints (docs/rules/webhooks.md): fan-out, claim, signed POST, record.

The worker runs ``WebhookDispatcher.run`` beside the partner outbox, with its own HTTP session and
its own concurrency, so client endpoints never hold partner deliveries up (and bookings never wait
on either: events are rows written with the change, delivered later). Each delivery is a message of
the delivery engine's ``client.webhook`` kind (``webhooks/kind.client_webhook_kind``) or, for a
driver's position, of ``client.driver_position`` (``webhooks/positions.py``, tried once), both
registered by ``transfers/deliveries.py``: the engine claims, sends through the one ``WebhookSender``
(their ``Transport``, ``webhooks/sender.py``: one HTTP session, opened when the dispatcher starts and
closed when it stops), judges, settles and records; ``WebhookQueue`` is the ``webhook_deliveries``
table as its queue (``webhooks/kind.py``); this module adds the fan-out, the per-endpoint fairness
and the loop that keeps the slots full.

1. **Fan-out** (one transaction per batch): events not yet fanned out get one delivery row per
   enabled endpoint of the client that subscribes to their type and existed when the event
   happened; the body (the exact bytes every attempt sends) is fixed now.
2. **Claim**: due deliveries are leased (``webhooks/repository.claim_due``), at most
   ``TRANSFERS_WEBHOOK_PER_ENDPOINT`` per endpoint per claim and none of an endpoint that already
   has that many in flight in this worker, so one slow or hanging endpoint holds at most that many
   of the ``TRANSFERS_WEBHOOK_CONCURRENCY`` slots and every other endpoint keeps being served.
   Claiming does not wait for earlier deliveries to finish.
3. **Send**: POST with Standard Webhooks headers (``webhook-id`` = the event id on every attempt,
   ``webhook-timestamp``, ``webhook-signature``: ``v1,<sig>`` and, for 24 h after a rotation, a
   second ``v1,<sig>`` by the previous secret, space separated), a 5 s deadline for the whole
   exchange, no redirects, the SSRF guard of partner calls where it is on.
4. **Record**: 2xx delivered; 410 failed and the endpoint disabled (its other pending deliveries
   stop); anything else, a time-out or a connection error is retried after about 10 s, 30 s,
   2 min, 10 min, 30 min, then hourly (``delivery/policy.next_attempt``) until 24 h after the
   event, then ``failed``. A worker killed mid-delivery leaves a lease that expires: the delivery
   is sent again with the same ``webhook-id`` (at least once).
"""

from __future__ import annotations

import asyncio
import time

import structlog

from transfers.bookings.models import Booking
from transfers.bookings.resource import booking_resource
from transfers.client_events import events
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import Registry
from transfers.services import Services
from transfers.webhooks import repository as repo
from transfers.webhooks.endpoints import new_delivery
from transfers.webhooks.kind import WebhookQueue
from transfers.webhooks.models import ClientEvent, WebhookDelivery
from transfers.webhooks.sender import WebhookSender

log = structlog.get_logger("transfers.webhooks")
FAN_OUT_BATCH = 200
REFILL_PAUSE = 0.02  # after a delivery finishes, before claiming: one claim refills several slots


class WebhookDispatcher:
    """The engine over ``webhook_deliveries``, with the fan-out before it. ``kinds``: the table's
    kinds, all sent through ``sender`` (``deliveries.webhook_dispatcher`` builds this); ``aclose``
    closes the sender's session."""

    def __init__(self, svc: Services, kinds: Registry[WebhookDelivery], sender: WebhookSender) -> None:
        self.svc = svc
        self.sender = sender
        settings = svc.settings
        self.concurrency = settings.webhook_concurrency
        self.per_endpoint = settings.webhook_per_endpoint
        self.in_flight: dict[int, int] = {}
        self.engine = Engine(
            svc.db,
            svc.clock,
            kinds,
            queue=WebhookQueue(self),
            lease_seconds=self._lease_seconds(),
            timeout=settings.webhook_timeout_seconds,
            concurrency=self.concurrency,
        )

    async def aclose(self) -> None:
        """Close the HTTP session of client endpoints (``run`` does when it stops)."""
        await self.sender.aclose()

    # --- fan-out ---------------------------------------------------------------------------------------

    async def fan_out(self, limit: int = FAN_OUT_BATCH) -> int:
        """One batch of events turned into deliveries; returns how many events were handled."""
        now = self.svc.clock.now()
        async with self.svc.db.write() as conn:
            found = await repo.claim_unfanned(conn, limit=limit)
            if not found:
                return 0
            endpoints = await repo.endpoints_of_clients(conn, (e.client_id for e in found))
            unread = [e.booking_id for e in found if e.booking is None and e.booking_id is not None]
            rows = await repo.bookings_by_id(conn, unread) if unread else {}
            deliveries = []
            bodies: dict[int, str] = {}
            for event in found:
                bodies[event.id] = self._body(event, rows).decode()
                deliveries += [
                    new_delivery(event.id, ep.id, now)
                    for ep in endpoints
                    if ep.client_id == event.client_id
                    and ep.created_at <= event.created_at
                    and events.matches(list(ep.events), event.type)
                ]
            await repo.mark_fanned_out(conn, bodies, now=now)
            await repo.insert_deliveries(conn, deliveries)
        return len(found)

    @staticmethod
    def _body(event: ClientEvent, rows: dict[int, Booking]) -> bytes:
        snapshot = event.booking
        if snapshot is None:  # written by a one-statement path: the row, with this event's status
            row = rows.get(event.booking_id) if event.booking_id is not None else None
            if row is None:
                snapshot = {}
            else:
                as_then = row.moved({"status": event.status}) if event.status else row
                snapshot = booking_resource(as_then, event.created_at)
        data = events.booking_data(snapshot, event.type, event.sequence, event.previous_status, event.data)
        return events.body(event.event_id, event.type, event.created_at, data)

    # --- claim, send, record: the delivery engine ------------------------------------------------------

    async def claim(self, limit: int) -> list[WebhookDelivery]:
        return await self.engine.claim(limit)

    def _lease_seconds(self) -> float:
        # The outbox's lease (TRANSFERS_OUTBOX_LEASE_SECONDS), and never shorter than two attempts'
        # deadlines: a killed worker's deliveries are sent again once it ends.
        return max(float(self.svc.settings.outbox_lease_seconds), self.svc.settings.webhook_timeout_seconds * 2)

    async def deliver(self, delivery: WebhookDelivery) -> None:
        endpoint = delivery.endpoint_id
        self.in_flight[endpoint] = self.in_flight.get(endpoint, 0) + 1
        try:
            await self.engine.deliver(delivery)
        except Exception:
            log.exception("webhook_delivery_failed", delivery_id=delivery.id)
        finally:
            self.in_flight[endpoint] -= 1
            if not self.in_flight[endpoint]:
                del self.in_flight[endpoint]

    def _refillable(self) -> bool:
        """An endpoint with deliveries in flight has half its slots free again."""
        return any(count <= self.per_endpoint // 2 for count in self.in_flight.values())

    # --- loops -----------------------------------------------------------------------------------------

    async def run_once(self) -> int:
        """Fan out what is waiting and deliver what is due, once (``transfers worker --once``, tests)."""
        while await self.fan_out():
            pass
        claimed = await self.claim(self.concurrency)
        await asyncio.gather(*(self.deliver(d) for d in claimed))
        return len(claimed)

    async def run(self, stopping: asyncio.Event) -> None:
        """Until ``stopping``: fan out, claim into free slots, deliver without waiting for each other.
        On stop, deliveries in flight finish; nothing new is claimed."""
        poll = self.svc.settings.outbox_poll_seconds
        self.sender.start()  # one session for every push of this dispatcher's life
        tasks: set[asyncio.Task[None]] = set()
        stop = asyncio.create_task(stopping.wait())
        next_fan_out = next_claim = 0.0
        found = 0
        finished = False  # a delivery finished since the last claim
        try:
            while not stopping.is_set():
                try:
                    # Events are fanned out once per poll interval, or at once while batches come full.
                    if time.monotonic() >= next_fan_out:
                        while await self.fan_out() == FAN_OUT_BATCH:
                            pass
                        next_fan_out = time.monotonic() + poll
                    # A claim is a transaction: claim when the last one found work, when deliveries
                    # finished and an endpoint has half its slots free again (or none in flight), or
                    # once per poll interval (new due deliveries).
                    free = self.concurrency - len(tasks)
                    refill = finished and (not self.in_flight or self._refillable())
                    if free > 0 and (found or refill or time.monotonic() >= next_claim):
                        claimed = await self.claim(free)
                        next_claim, finished = time.monotonic() + poll, False
                        for delivery in claimed:
                            tasks.add(asyncio.create_task(self.deliver(delivery)))
                        found = len(claimed) if len(claimed) >= free else 0  # fewer: nothing more is claimable now
                    else:
                        found = 0
                except Exception:
                    found = 0
                    log.exception("job_failed", job="webhook_delivery")
                wait = 0.0 if found and len(tasks) < self.concurrency else poll
                done, _ = await asyncio.wait({*tasks, stop}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                tasks -= done
                finished = finished or bool(done - {stop})
                if done and stop not in done and tasks:
                    await asyncio.sleep(REFILL_PAUSE)  # let a few more finish: one claim refills them all
            if tasks:
                await asyncio.wait(tasks)
        finally:
            stop.cancel()
            await self.aclose()
