"""Delivers client events to webhook endpoints (docs/rules/webhooks.md): fan-out, claim, signed POST, record.

The worker runs ``WebhookDispatcher.run`` beside the partner outbox, with its own HTTP session and
its own concurrency, so client endpoints never hold partner deliveries up (and bookings never wait
on either: events are rows written with the change, delivered later). Each delivery is a message of
the delivery engine's ``client.webhook`` kind (``client_webhook_kind``): the engine claims, sends
through ``WebhookSender`` (its ``Transport``), judges, settles on the standard schedule and records;
``WebhookQueue`` is the ``webhook_deliveries`` table as its queue; this module adds the fan-out, the
per-endpoint fairness and the loop that keeps the slots full.

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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import aiohttp
import structlog
from aiohttp import hdrs
from sqlalchemy.ext.asyncio import AsyncConnection
from yarl import URL

from transfers.bookings.models import Booking
from transfers.bookings.resource import booking_resource
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, FastFinish, Judged, Registry
from transfers.delivery.models import EXPIRED, FAILED
from transfers.delivery.policy import Ending, Verdict, settle
from transfers.delivery.transport import CallResult, Receiver
from transfers.partners.secrets_box import SecretBox
from transfers.partners.signing import sign
from transfers.partners.ssrf import BlockedDestination, GuardedResolver, refuse_literal_host
from transfers.services import Services
from transfers.webhooks import events
from transfers.webhooks import repository as repo
from transfers.webhooks.endpoints import new_delivery

log = structlog.get_logger("transfers.webhooks")
USER_AGENT = "transfers/0.1 (+client webhooks)"
FAN_OUT_BATCH = 200
REFILL_PAUSE = 0.02  # after a delivery finishes, before claiming: one claim refills several slots
GONE = 410
CLIENT_WEBHOOK = "client.webhook"  # the engine's kind of every webhook_deliveries row
_MAX_ANSWER_BYTES = 64 * 1024  # the answer is not used: read a little, so the connection can be reused


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """A claimed ``webhook_deliveries`` row with its event and endpoint: a message of the engine's
    ``client.webhook`` kind (``webhooks/repository.claim_due``)."""

    id: int
    endpoint_id: int
    attempts: int
    lease_until: datetime | None
    deadline_at: datetime
    created_at: datetime
    event_id: str
    type: str
    body: str
    url: str
    secret_enc: str
    old_secret_enc: str | None
    old_secret_until: datetime | None
    kind: str = CLIENT_WEBHOOK

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> WebhookDelivery:
        return cls(*(row[name] for name in _CLAIMED))

    def log_fields(self) -> dict[str, Any]:
        return {"delivery_id": self.id, "event_id": self.event_id, "type": self.type}


_CLAIMED = (
    "id",
    "endpoint_id",
    "attempts",
    "lease_until",
    "deadline_at",
    "created_at",
    "event_id",
    "type",
    "body",
    "url",
    "secret_enc",
    "old_secret_enc",
    "old_secret_until",
)


class WebhookSender:
    """The one HTTP session for client endpoints (made lazily inside the running loop): the
    ``client.webhook`` kind's ``Transport``, a signed POST."""

    def __init__(self, *, allow_private: bool, per_host: int, box: SecretBox, clock: Clock) -> None:
        self._allow_private = allow_private
        self._per_host = per_host
        self._box = box
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opened: dict[str, str] = {}  # sealed secret -> secret: decrypted once per process

    def _http(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is not None and self._loop is loop and not self._session.closed:
            return self._session
        connector = aiohttp.TCPConnector(
            limit=0,
            limit_per_host=self._per_host,
            keepalive_timeout=4.0,
            resolver=None if self._allow_private else GuardedResolver(),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={hdrs.USER_AGENT: USER_AGENT},
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None),
            trust_env=False,
        )
        self._loop = loop
        return self._session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()

    def _open(self, sealed: str) -> str:
        opened = self._opened.get(sealed)
        if opened is None:
            if len(self._opened) > 10_000:
                self._opened.clear()
            opened = self._opened[sealed] = self._box.open(sealed)
        return opened

    async def send(self, kind: DeliveryKind, message: Any, *, timeout: float, target: Any) -> CallResult:
        """Sign and POST the event's fixed body: ``webhook-id`` is the event id on every attempt."""
        delivery: WebhookDelivery = message
        return await self.signed_post(
            delivery.url,
            delivery.body.encode(),
            delivery.event_id,
            secret_enc=delivery.secret_enc,
            old_secret_enc=delivery.old_secret_enc,
            old_secret_until=delivery.old_secret_until,
            timeout=timeout,
        )

    async def signed_post(
        self,
        url: str,
        body: bytes,
        webhook_id: str,
        *,
        secret_enc: str,
        old_secret_enc: str | None,
        old_secret_until: datetime | None,
        timeout: float,
    ) -> CallResult:
        """POST ``body`` signed by the endpoint's secret (and, for 24 h after a rotation, its previous one)."""
        now = self._clock.now()
        secrets = [self._open(secret_enc)]
        if old_secret_enc and old_secret_until and old_secret_until > now:
            secrets.append(self._open(old_secret_enc))
        timestamp = int(now.timestamp())
        headers = {
            "Content-Type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature_header(secrets, webhook_id, timestamp, body),
        }
        return await self.post(url, body, headers, timeout=timeout)

    async def post(self, url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> CallResult:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                if not self._allow_private:
                    refuse_literal_host(URL(url).raw_host or "")
                async with self._http().post(url, data=body, headers=headers, allow_redirects=False) as answer:
                    await answer.content.read(_MAX_ANSWER_BYTES)
                    status = answer.status
        except TimeoutError:
            return CallResult("timeout", None, None, f"no answer within {timeout:g}s", _ms(started))
        except BlockedDestination as exc:
            return CallResult("blocked", None, None, f"SSRF guard: {exc}", _ms(started))
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return CallResult("connect_error", None, None, type(exc).__name__, _ms(started))
        if 200 <= status < 300:
            return CallResult("ok", status, None, None, _ms(started))
        return CallResult("http_error", status, None, f"HTTP {status}", _ms(started))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def signature_header(secrets: list[str], event_id: str, timestamp: int, body: bytes) -> str:
    return " ".join(sign(secret, event_id, timestamp, body) for secret in secrets)


def judge(kind: DeliveryKind, result: CallResult) -> Judged:
    """A 2xx is delivered, a 410 gives up (and disables the endpoint: ``_gone``), anything else, a
    time-out or a connection error is tried again until 24 h after the event."""
    if result.ok:
        return Judged(Verdict.DONE, result.http_status, None, result)
    if result.http_status == GONE:
        return Judged(Verdict.PERMANENT, result.http_status, result.error, result)
    return Judged(Verdict.RETRY, result.http_status, result.error, result)


async def _gone(
    conn: AsyncConnection, message: Any, ending: Ending, answer: Any, error: str | None, now: datetime
) -> None:
    """410 (the only refusal): the endpoint disabled and its other pending deliveries stopped, in the
    transaction that failed this one."""
    if ending is Ending.REFUSED:
        delivery: WebhookDelivery = message
        reason = "the endpoint answered 410 Gone"
        await repo.disable_endpoint(conn, delivery.endpoint_id, reason=reason, now=now)
        await repo.fail_pending(conn, delivery.endpoint_id, reason=reason, now=now)


def record_fast(db: Database) -> FastFinish:
    """PostgreSQL: an attempt that does not disable the endpoint is one autocommit statement, run
    unflushed (``repository.RECORD_STATEMENT``): a record lost in a crash only means the delivery is
    sent again after its lease, with the same webhook-id, which at-least-once allows anyway."""

    async def record(message: Any, attempt: dict[str, Any], judged: Judged, now: datetime) -> Any:
        delivery: WebhookDelivery = message
        if judged.verdict is Verdict.PERMANENT:
            return None  # 410: the general way, with the endpoint disabled in the same transaction
        settled = settle(judged.verdict, attempts_done=delivery.attempts + 1, now=now, deadline=delivery.deadline_at)
        status, error = WebhookQueue.status_of(settled.status, judged.error)
        await db.write_one_unflushed(
            repo.RECORD_STATEMENT,
            **repo.record_params(
                {"id": delivery.id, "lease_until": delivery.lease_until},
                status=status,
                now=now,
                http_status=attempt["http_status"],
                error=error,
                next_attempt_at=settled.retry_at,
            ),
        )
        return True

    return record


class WebhookQueue:
    """The ``webhook_deliveries`` table as the engine's ``Queue``: a claim takes at most
    ``per_endpoint`` deliveries of any one endpoint and none of an endpoint that already has that
    many in flight here; a delivery's last HTTP status is kept on its row (no attempt log)."""

    name = "webhooks"
    log_event = "webhook_delivery"

    def __init__(self, owner: WebhookDispatcher) -> None:
        self.owner = owner  # its ``per_endpoint`` and ``in_flight``, read at each claim

    @staticmethod
    def status_of(status: str, error: str | None) -> tuple[str, str | None]:
        """The engine's statuses as this table keeps them: no ``expired``, a delivery that ran out of
        time is ``failed``, saying so."""
        if status == EXPIRED:
            return FAILED, f"{error}; gave up 24 h after the event"
        return status, error

    async def claim(
        self, conn: AsyncConnection, *, now: datetime, lease_until: datetime, limit: int, kinds: Sequence[str] | None
    ) -> list[WebhookDelivery]:
        per_endpoint = self.owner.per_endpoint
        busy = [endpoint for endpoint, count in self.owner.in_flight.items() if count >= per_endpoint]
        rows = await repo.claim_due(
            conn, now=now, lease_until=lease_until, limit=limit, per_endpoint=per_endpoint, busy=busy
        )
        return [WebhookDelivery.from_row(row) for row in rows]

    async def record_attempt(self, conn: AsyncConnection, message: Any, attempt: dict[str, Any]) -> None:
        return None  # the row keeps the last attempt's HTTP status and error (``finish``/``reschedule``)

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: Any,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: dict[str, Any],
    ) -> bool:
        return await self._record(
            conn, message, repo.PENDING, now=next_attempt_at, error=error, attempt=attempt, next_at=next_attempt_at
        )

    async def finish(
        self,
        conn: AsyncConnection,
        message: Any,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: dict[str, Any],
    ) -> bool:
        status, error = self.status_of(status, error)
        return await self._record(conn, message, status, now=now, error=error, attempt=attempt)

    async def _record(
        self,
        conn: AsyncConnection,
        message: Any,
        status: str,
        *,
        now: datetime,
        error: str | None,
        attempt: dict[str, Any],
        next_at: datetime | None = None,
    ) -> bool:
        """The attempt's outcome on a delivery still leased to us (``repository.record``): finished at
        ``now``, or still pending until ``next_at``."""
        delivery: WebhookDelivery = message
        return await repo.record(
            conn,
            {"id": delivery.id, "lease_until": delivery.lease_until},
            status=status,
            now=now,
            http_status=attempt["http_status"],
            error=error,
            next_attempt_at=next_at,
        )

    async def drop(self, conn: AsyncConnection, message: Any, *, now: datetime, reason: str) -> bool:
        return await self._record(conn, message, FAILED, now=now, error=reason, attempt={"http_status": None})

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[Any]:
        return []  # a delivery gives up at the attempt whose next one would fall past its deadline


class WebhookDispatcher:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        settings = svc.settings
        self.sender = WebhookSender(
            allow_private=settings.private_partner_urls_allowed,
            per_host=settings.webhook_per_endpoint * 2,
            box=svc.box,
            clock=svc.clock,
        )
        self.concurrency = settings.webhook_concurrency
        self.per_endpoint = settings.webhook_per_endpoint
        self.in_flight: dict[int, int] = {}
        self.engine = Engine(
            svc.db,
            svc.clock,
            Registry((client_webhook_kind(self.sender, svc.db),)),
            lease_seconds=self._lease_seconds(),
            timeout=settings.webhook_timeout_seconds,
            concurrency=self.concurrency,
            queue=WebhookQueue(self),
        )

    # --- fan-out ---------------------------------------------------------------------------------------

    async def fan_out(self, limit: int = FAN_OUT_BATCH) -> int:
        """One batch of events turned into deliveries; returns how many events were handled."""
        now = self.svc.clock.now()
        async with self.svc.db.write() as conn:
            found = await repo.claim_unfanned(conn, limit=limit)
            if not found:
                return 0
            endpoints = await repo.endpoints_of_clients(conn, (e["client_id"] for e in found))
            unread = [e["booking_id"] for e in found if e["booking"] is None and e["booking_id"] is not None]
            rows = await repo.bookings_by_id(conn, unread) if unread else {}
            deliveries = []
            bodies: dict[int, str] = {}
            for event in found:
                bodies[event["id"]] = self._body(event, rows).decode()
                deliveries += [
                    new_delivery(event["id"], ep["id"], now)
                    for ep in endpoints
                    if ep["client_id"] == event["client_id"]
                    and ep["created_at"] <= event["created_at"]
                    and events.matches(list(ep["events"]), event["type"])
                ]
            await repo.mark_fanned_out(conn, bodies, now=now)
            await repo.insert_deliveries(conn, deliveries)
        return len(found)

    @staticmethod
    def _body(event: dict[str, Any], rows: dict[int, Booking]) -> bytes:
        snapshot = event["booking"]
        if snapshot is None:  # written by a one-statement path: the row, with this event's status
            row = rows.get(event["booking_id"])
            if row is None:
                snapshot = {}
            else:
                as_then = row.moved({"status": event["status"]}) if event["status"] else row
                snapshot = booking_resource(as_then, event["created_at"])
        data = events.booking_data(
            snapshot, event["type"], event["sequence"], event["previous_status"], event.get("data")
        )
        return events.body(event["event_id"], event["type"], event["created_at"], data)

    # --- claim, send, record: the delivery engine ------------------------------------------------------

    async def claim(self, limit: int) -> list[WebhookDelivery]:
        return cast(list[WebhookDelivery], await self.engine.claim(limit))

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
            await self.sender.aclose()


def client_webhook_kind(sender: WebhookSender, db: Database) -> DeliveryKind:
    """The ``client.webhook`` kind: every delivery goes through ``sender``, on the standard schedule
    until its deadline (24 h after the event), a 410 disabling the endpoint."""
    receiver = Receiver(sender)

    async def route(message: Any, hint: Any) -> Receiver:
        return receiver

    return DeliveryKind(CLIENT_WEBHOOK, route, judge, _gone, fast_finish=record_fast(db))
