"""Client booking use cases: create (pay, store, hand to the partner), read, cancel (refund)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError

from transfers import failpoints, money
from transfers.bookings import fast_paths, partner_payloads
from transfers.bookings import repository as repo
from transfers.bookings.cancel import Actor, CancelRequest, cancel_locked
from transfers.bookings.cancel_rules import quote
from transfers.bookings.client_queries import booking_to_act_on
from transfers.bookings.creating import (
    VehicleFull,
    booking_values,
    reservation_clash,
    seat_claim,
    source_endpoint,
)
from transfers.bookings.hooks import HOOKS, AfterCreate
from transfers.bookings.hooks import created as created_hooks
from transfers.bookings.lifecycle import ConcurrentChange, lock_booking
from transfers.bookings.models import UNASSIGNED_ID, Booking
from transfers.bookings.reservation import could_exist, new_reservation_no
from transfers.bookings.resource import booking_resource
from transfers.bookings.rules import (
    check_search_id,
    clean_note,
    reason_id,
    validate_create,
    vehicle_number,
)
from transfers.bookings.state import TransitionRefused, is_cancelable
from transfers.clients.models import ClientPrincipal, Permission
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import delivery_deadline
from transfers.errors import Code, Conflict, ErrorCode, Invalid, NotFound, Refused
from transfers.observability import metrics
from transfers.partners.calls import MessageKind
from transfers.partners.client import PartnerEndpoint
from transfers.reference.airports import local_time
from transfers.reference.repository import find_active_reason
from transfers.services import Services
from transfers.wallet.ledger import InsufficientBalance


async def create_booking(
    svc: Services, client: ClientPrincipal, body: dict[str, Any], idempotency_key: str | None = None
) -> Booking:
    """``POST /booking``: the booking as stored (with the partner's answer when it came in time), also
    the one this Idempotency-Key created before. The route answers it as the BookingResource."""
    if not client.may(Permission.BOOKING_CREATE):
        raise Refused(Code.CREATION_PERMISSION_DENIED)
    now = svc.clock.now()
    search_id = check_search_id(body)
    dispatcher = svc.dispatcher
    try:
        created = await _store_and_charge(
            svc, client, body, search_id, now, idempotency_key, leased=dispatcher is not None
        )
    except IntegrityError:
        if idempotency_key is None:
            raise
        # The same Idempotency-Key already created a booking (a retry after a lost answer or a
        # crash): answer with that booking, never a second one.
        async with svc.db.read() as conn:
            existing = await repo.get_by_idempotency_key(conn, client.client_id, idempotency_key)
        if existing is None:
            raise
        return existing
    failpoints.hit("booking.after_commit")
    stored = None
    if dispatcher is not None:
        # The partner's answer, applied, comes back as the booking row: no re-read needed then.
        answer = await dispatcher.deliver_leased(
            created.message, created.endpoint, budget=svc.settings.partner_create_budget_seconds
        )
        stored = answer if isinstance(answer, Booking) else None
    if stored is None:  # nothing applied (partner unreachable, slow, ...): read what the booking is now
        async with svc.db.read() as conn:
            stored = await repo.get_by_id(conn, created.booking_id)
    if stored is None:  # bookings are never deleted: only a database changed under us gets here (500)
        raise LookupError(f"booking {created.booking_id} is gone right after its creation")
    created_hooks(created.after, stored)
    failpoints.hit("booking.before_response")
    return stored


@dataclass(frozen=True)
class _Created:
    booking_id: int
    message: OutboxMessage  # the partner's POST /booking/create in the outbox
    after: list[AfterCreate]  # what the features run once it is stored (``bookings/hooks.py``)
    endpoint: PartnerEndpoint


async def _store_and_charge(
    svc: Services,
    client: ClientPrincipal,
    body: dict[str, Any],
    search_id: str,
    now: datetime,
    idempotency_key: str | None,
    *,
    leased: bool,
) -> _Created:
    """Read the offer, then write the booking, its audit row, the partner's create message and the
    debit of a wallet payer all or nothing (``fast_paths.store_created``).

    On PostgreSQL those writes are a single statement, atomic by itself, run in autocommit by the
    direct path (db/direct.py): no BEGIN/COMMIT round trips, and the wallet row is locked only while
    PostgreSQL executes and commits it, never while this process gets round to sending COMMIT (with
    32 creates on one wallet, up to 11 waited on that lock). SQLite writes statement by statement
    in a write transaction (BEGIN IMMEDIATE).

    ``leased``: the message is written already leased to this request for the standard lease time,
    so the request's own delivery attempt needs no claim transaction. Workers leave it alone until
    the lease ends (after a crash right after COMMIT the worker's first delivery waits for it, as
    after a crash during any delivery), and not before ``not_before`` in any case."""
    vehicle_no = vehicle_number(body.get("vehicle_id"))
    settings = svc.settings
    search, offer, source = await repo.find_offer(
        svc.db, client_id=client.client_id, search_id=search_id, vehicle_no=vehicle_no, now=now
    )
    request = validate_create(body, search_found=search is not None, offer=offer)
    if search is None:  # validate_create refused these already (1002, 1004): the checks narrow the types
        raise NotFound(Code.SEARCH_NOT_EXISTS)
    if offer is None or source is None:
        raise Invalid(Code.VEHICLE_ID_INVALID)
    values = booking_values(client, search, offer, source.search_vehicle_id, request, now, idempotency_key)
    values["free_wait_minutes"] = source.free_wait_minutes  # docs/rules/flights.md#partner-policy, as sold
    after = await HOOKS.prepare_new(svc, values, now)  # the features' columns (the flight's watch)
    deadline = delivery_deadline(
        now,
        values["pickup_at"],
        hours_after_creation=settings.delivery_deadline_hours,
        hours_before_pickup=settings.delivery_deadline_before_pickup_hours,
    )
    for _ in range(5):
        values["reservation_no"] = new_reservation_no()
        created = Booking.new(values, UNASSIGNED_ID)
        # Workers leave it alone while this request makes its own attempt (the 2 s budget).
        message = outbox_repo.new_message(
            partner_id=values["partner_id"],
            kind=MessageKind.CREATE.value,
            payload=partner_payloads.create_payload(created),
            now=now,
            deadline=deadline,
            not_before=now + timedelta(seconds=settings.partner_create_budget_seconds + 1),
            lease_until=now + timedelta(seconds=settings.outbox_lease_seconds) if leased else None,
        )
        try:
            booking_id, stored = await fast_paths.store_created(
                svc.db,
                values,
                actor=f"client:{client.client_id}",
                message=message,
                before=seat_claim(values) if source.hosted else None,
                created=created,
            )
        except VehicleFull:
            raise Conflict(ErrorCode.VEHICLE_UNAVAILABLE) from None
        except InsufficientBalance:
            metrics.WALLET_REFUSALS.inc()
            raise Refused(Code.WALLET_BALANCE_INSUFFICIENT) from None
        except IntegrityError as exc:
            if not reservation_clash(exc):
                raise
            continue
        # Counted here, where the booking was written: an idempotent replay never gets this far.
        metrics.BOOKINGS_CREATED.inc()
        return _Created(
            booking_id,
            stored,
            after,
            source_endpoint(svc, source),
        )
    raise RuntimeError("could not draw a free reservation number")  # 2^49 space: practically unreachable


async def get_booking(svc: Services, client: ClientPrincipal, reservation_no: str | None) -> dict[str, Any]:
    if not reservation_no:
        raise Invalid(Code.BOOKING_INFO_RESERVATION_REQUIRED)
    if not could_exist(reservation_no):
        raise NotFound(Code.BOOKING_INFO_RESERVATION_NOT_FOUND)
    row = await repo.resource_fields_for_client(svc.db, client.client_id, reservation_no)
    if row is None:
        raise NotFound(Code.BOOKING_INFO_RESERVATION_NOT_FOUND)
    return booking_resource(row, svc.clock.now())


async def cancel_booking(
    svc: Services,
    client: ClientPrincipal,
    reservation_no: str | None,
    cancellation_id: str | None,
    note: str | None,
    idempotency_key: str | None = None,
) -> Booking:
    """The client's cancel (``bookings/cancel.py`` with ``Actor.CLIENT``): the cancelled booking, also
    when this very Idempotency-Key cancelled it before. Raises ``DomainError``s with the spec's codes."""
    if not client.may(Permission.BOOKING_CANCEL):
        raise Refused(Code.CANCELLATION_PERMISSION_DENIED)
    found = await booking_to_act_on(svc, client, reservation_no)
    reason_number = reason_id(cancellation_id or "")
    note = clean_note(note)
    now = svc.clock.now()
    async with svc.db.write() as conn:
        reason = await find_active_reason(conn, reason_number)
        if reason is None:
            raise Invalid(Code.CANCELLATION_TYPE_INVALID)
        booking = await lock_booking(conn, found.id)
        if booking is None:  # gone between the read and the lock: nothing to cancel
            raise NotFound(Code.CANCELLATION_RESERVATION_NOT_FOUND)
        # The fee's tier is decided by the clock read here, with the booking's row locked, just
        # before the change commits (docs/rules/cancellation.md): what a quote promised until its valid_until holds.
        now = svc.clock.now()
        request = CancelRequest(
            Actor.CLIENT,
            f"client:{client.client_id}",
            reason.name + (f": {note}" if note else ""),
            note=note,
            partner_reason=reason.name,
            reason_id=reason.id,
            idempotency_key=idempotency_key,
        )
        try:
            done = await cancel_locked(conn, booking, request, now=now)
        except (TransitionRefused, ConcurrentChange):
            raise Refused(Code.CANCELLATION_FAILED) from None
        if done.repeated:  # this very request already cancelled it (retry after a lost answer)
            return done.booking
    failpoints.hit("cancel.after_commit")
    return done.booking


async def cancellation_quote(svc: Services, client: ClientPrincipal, reservation_no: str | None) -> dict[str, Any]:
    """``GET /booking/cancellation-quote`` (docs/rules/cancellation.md): what cancelling now would cost. Codes as
    for cancel (1200, 1201). ``fee``/``refund`` are null when the booking cannot be cancelled."""
    booking = await booking_to_act_on(svc, client, reservation_no)
    now = svc.clock.now()
    answer: dict[str, Any] = {
        "reservation_no": booking.reservation_no,
        "cancelable": False,
        "fee": None,
        "refund": None,
        "currency": booking.currency,
        "valid_until": None,
    }
    if is_cancelable(booking.status, booking.pickup_at, now):
        priced = quote(booking, now)
        answer.update(
            cancelable=True,
            fee=money.text(priced.fee, booking.currency),
            refund=money.text(priced.refund, booking.currency),
            valid_until=None
            if priced.valid_until is None
            else local_time(booking.airport_iata, priced.valid_until).isoformat(),
        )
    return answer
