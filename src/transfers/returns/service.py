"""Booking a return trip in one call (docs/rules/return-trips.md#create): two bookings, one per leg,
written in one transaction (both debits or neither), each then sent to its partner as its own create.

How the pair is written (``fast_paths.store_created_many``; docs/operations/performance-history.md#return-trips):

* on PostgreSQL, no hosted leg: the single create's one statement (``fast_paths``, frozen SQL) once
  per leg, in ONE transaction on a direct connection (BEGIN, leg 1, leg 2, COMMIT; ROLLBACK and 1101
  when the second debit does not fit after the first, i.e. when their sum does not). Each leg's
  flight watch is taken as the single create takes its own (the ``new_booking`` hook of
  ``bookings/hooks.py`` outside any transaction: ``flights/enrolment.py`` reads it, makes it when
  missing, makes it due when due later). Why: through the general
  path below the pair cost 2.87x one create's CPU (8.08 / 2.82 ms, target 1.6x).
* on SQLite, or with a hosted leg (its seat's counter row must be locked until the bookings commit,
  as for a single hosted create): the general path, ``lifecycle.create_many`` in one
  ``Database.write()`` with each leg's seat and flight watch taken first in the same transaction;
  each table's rows of both legs in one statement, the two debits one wallet UPDATE by their sum.

Either way one SELECT reads the search and both legs' offers and partners first, and the two
partner creates are sent at once, each accepting answer recorded by the dispatcher's own path, as
for a single create. Then each leg's flight gets its check at creation as a single create's does
(what the hook answered: ``flights/enrolment.start_check``; docs/rules/flights.md#watching: every new
booking with a tracked
flight is checked at creation, a return trip's legs included).
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import fast_paths, partner_payloads
from transfers.bookings import repository as repo
from transfers.bookings.creating import (
    VehicleFull,
    booking_values,
    reservation_clash,
    seat_claim,
    source_endpoint,
)
from transfers.bookings.hooks import HOOKS, AfterCreate, created
from transfers.bookings.models import UNASSIGNED_ID, Booking
from transfers.bookings.repository import OfferSource
from transfers.bookings.reservation import ALPHABET, LENGTH, new_reservation_no
from transfers.bookings.rules import check_search_id, validate_create, vehicle_number
from transfers.clients.models import ClientPrincipal, Permission
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import NewMessage, OutboxMessage
from transfers.delivery.policy import delivery_deadline
from transfers.errors import Code, Conflict, ErrorCode, Invalid, NotFound, Refused
from transfers.observability import metrics
from transfers.partners.calls import MessageKind
from transfers.returns.rules import return_details
from transfers.search.offers import SearchedTrip
from transfers.services import Services
from transfers.wallet.ledger import InsufficientBalance


def new_trip_id() -> str:
    """``TR-`` and ten characters of the reservation numbers' alphabet (no look-alikes)."""
    return "TR-" + "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


@dataclass
class _Leg:
    values: dict[str, Any]
    source: OfferSource
    after: list[AfterCreate] = field(default_factory=list)  # the features' (``bookings/hooks.py``)


async def create_trip(
    svc: Services, client: ClientPrincipal, body: dict[str, Any], idempotency_key: str | None = None
) -> tuple[Booking, Booking]:
    """``POST /booking`` with ``return_vehicle_id`` (docs/rules/return-trips.md#create): (the way out, the
    way back) as stored, with the partners' answers when they came in time; also the pair this
    Idempotency-Key created before."""
    if not client.may(Permission.BOOKING_CREATE):
        raise Refused(Code.CREATION_PERMISSION_DENIED)
    search_id = check_search_id(body)
    now = svc.clock.now()
    back_no = vehicle_number(body.get("return_vehicle_id"))
    search, (offer, source), (back_offer, back_source) = await repo.find_offers(
        svc.db,
        client_id=client.client_id,
        search_id=search_id,
        vehicle_no=vehicle_number(body.get("vehicle_id")),
        back_no=back_no,
        now=now,
    )
    request = validate_create(body, search_found=search is not None, offer=offer)
    if search is None:
        raise NotFound(Code.SEARCH_NOT_EXISTS)
    if offer is None or source is None:
        raise Invalid(Code.VEHICLE_ID_INVALID)
    # 1022 after every field of the way out (1001-1021) and before 1101: docs/rules/return-trips.md#create
    if back_no is None or back_offer is None or back_source is None or search.return_pickup_at is None:
        raise Invalid(Code.RETURN_VEHICLE_ID_INVALID)
    back_request = return_details(body.get("return_travel_details"), request, back_offer)
    trip_id = new_trip_id()
    out_values = booking_values(client, search, offer, source.search_vehicle_id, request, now, idempotency_key)
    back_values = booking_values(
        client,
        _reversed(search, search.return_pickup_at),
        back_offer,
        back_source.search_vehicle_id,
        back_request,
        now,
        None,
    )
    out_values.update(trip_id=trip_id, trip_leg=1)
    back_values.update(trip_id=trip_id, trip_leg=2)
    # docs/rules/flights.md#partner-policy: each leg sold with its partner's free wait
    out_values["free_wait_minutes"] = source.free_wait_minutes
    back_values["free_wait_minutes"] = back_source.free_wait_minutes
    legs = [_Leg(out_values, source), _Leg(back_values, back_source)]
    actor = f"client:{client.client_id}"
    leased = svc.dispatcher is not None
    general = svc.db.is_sqlite or any(leg.source.hosted for leg in legs)
    # What the features add to each leg (``bookings/hooks.py``: the flight's watch) and run once it is
    # stored (the flight's check at creation). The general path asks them in its transaction (``_write``);
    # the one-statement pair first, as the single create does.
    if not general:
        for leg in legs:
            leg.after = await HOOKS.prepare_new(svc, leg.values, now)
    for _ in range(5):
        numbers = (new_reservation_no(), new_reservation_no())
        for leg, own, other in zip(legs, numbers, reversed(numbers), strict=True):
            leg.values.update(reservation_no=own, trip_other_reservation_no=other)
        messages = [_message(svc, leg.values, now, leased) for leg in legs]
        try:
            stored = await _write(svc, legs, messages, actor, now, general=general)
        except VehicleFull:
            raise Conflict(ErrorCode.VEHICLE_UNAVAILABLE) from None
        except InsufficientBalance:
            metrics.WALLET_REFUSALS.inc()
            raise Refused(Code.WALLET_BALANCE_INSUFFICIENT) from None  # 1101 on the sum: neither leg written
        except IntegrityError as exc:
            if reservation_clash(exc):
                continue
            if idempotency_key is None:
                raise
            existing = await _existing(svc, client, idempotency_key)
            if existing is None:
                raise
            return existing
        metrics.BOOKINGS_CREATED.inc(2)
        pair = await _deliver(svc, legs, stored)
        for booking, leg in zip(pair, legs, strict=True):
            created(leg.after, booking)
        return pair
    raise RuntimeError("could not draw free reservation numbers")  # 2^49 space: practically unreachable


def _reversed(search: SearchedTrip, return_pickup_at: datetime) -> SearchedTrip:
    """The way back as a search of its own: the route reversed, at the return time."""
    return replace(
        search,
        pickup_at=return_pickup_at,
        pickup_location=search.dropoff_location,
        dropoff_location=search.pickup_location,
    )


def _message(svc: Services, values: dict[str, Any], now: datetime, leased: bool) -> NewMessage:
    settings = svc.settings
    deadline = delivery_deadline(
        now,
        values["pickup_at"],
        hours_after_creation=settings.delivery_deadline_hours,
        hours_before_pickup=settings.delivery_deadline_before_pickup_hours,
    )
    return outbox_repo.new_message(
        partner_id=values["partner_id"],
        kind=MessageKind.CREATE.value,
        payload=partner_payloads.create_payload(Booking.new(values, UNASSIGNED_ID)),
        now=now,
        deadline=deadline,
        not_before=now + timedelta(seconds=settings.partner_create_budget_seconds + 1),
        lease_until=now + timedelta(seconds=settings.outbox_lease_seconds) if leased else None,
    )


async def _write(
    svc: Services, legs: list[_Leg], messages: list[NewMessage], actor: str, now: datetime, *, general: bool
) -> list[tuple[int, OutboxMessage]]:
    """Both bookings, their audit rows, create messages, client events and debits in ONE transaction
    (``fast_paths.store_created_many``). ``general``: by ``lifecycle.create_many``, each leg's seat
    claimed on that leg's own day when hosted (docs/rules/return-trips.md#create) and each flight's
    watch taken first, in the same transaction."""
    rows = [(leg.values, message) for leg, message in zip(legs, messages, strict=True)]
    if not general:
        return await fast_paths.store_created_many(svc.db, rows, actor=actor)

    async def before(conn: AsyncConnection) -> None:
        for leg in legs:
            if leg.source.hosted:
                await seat_claim(leg.values)(conn)
            leg.after = await HOOKS.prepare_new(svc, leg.values, now, conn)

    return await fast_paths.store_created_many(svc.db, rows, actor=actor, before=before)


async def _deliver(
    svc: Services, legs: list[_Leg], written: list[tuple[int, OutboxMessage]]
) -> tuple[Booking, Booking]:
    """Each leg's create to its partner, both at once within the create budget (a partner that
    declines or is down touches its own leg only); then each leg as it is now."""
    dispatcher = svc.dispatcher
    ids = [booking_id for booking_id, _ in written]
    stored: list[Booking | None] = [None, None]
    if dispatcher is not None:
        answers = await asyncio.gather(
            *(
                dispatcher.deliver_leased(
                    message, source_endpoint(svc, leg.source), budget=svc.settings.partner_create_budget_seconds
                )
                for (_, message), leg in zip(written, legs, strict=True)
            )
        )
        stored = [a if isinstance(a, Booking) else None for a in answers]
    out: list[Booking] = []
    for booking_id, booking in zip(ids, stored, strict=True):
        if booking is None:
            async with svc.db.read() as conn:
                booking = await repo.get_by_id(conn, booking_id)
        if booking is None:
            raise LookupError(f"booking {booking_id} is gone right after its creation")
        out.append(booking)
    return out[0], out[1]


async def _existing(svc: Services, client: ClientPrincipal, key: str) -> tuple[Booking, Booking] | None:
    """The pair this Idempotency-Key created before (the key is the way out's; the way back is its trip's)."""
    async with svc.db.read() as conn:
        out = await repo.get_by_idempotency_key(conn, client.client_id, key)
        if out is None or out.trip_other_reservation_no is None:
            return None
        back = await repo.get_for_client(conn, client.client_id, out.trip_other_reservation_no)
    return None if back is None else (out, back)
