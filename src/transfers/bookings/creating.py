"""The pieces of a new booking shared by the single create (``bookings/service.py``) and a return
trip's pair (``bookings/return_trip.py``): its column values, its flight columns, a hosted seat's
claim and the reservation number's clash. Kept apart so both import them at module top (no cycle:
``service`` imports ``return_trip``)."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.bookings import flight_repository, flight_watch, hosted_capacity, tracking
from transfers.bookings import repository as repo
from transfers.bookings.models import Booking
from transfers.bookings.rules import BookingRequest
from transfers.bookings.state import BookingStatus
from transfers.clients.models import ClientPrincipal
from transfers.partners.wire import BOOKING_TYPE
from transfers.search.offers import Offer, SearchedTrip
from transfers.services import Services


async def flight_fields(svc: Services, values: dict[str, Any], source: repo.OfferSource, now: datetime) -> bool:
    """A new booking's flight columns: the partner's free wait as sold and, for a watched flight, its
    watch (docs/rules/flights.md#watching). The watch is read first, outside any transaction: a watch
    already due is taken as it is; a missing one is made (``flight_repository.new_watch``); one due later
    is made due (``flight_repository.make_due``), each by a statement of its own (the single create's
    booking is written by one statement of its own, ``fast_paths.store_created``).

    Returns whether the create starts the flight's check at creation: not for an unwatched flight, nor
    when the provider answered for this flight less than ``flight_watch.CREATION_RECHECK`` ago (the
    worker's pass checks the newcomer: its watch is due)."""
    values["free_wait_minutes"] = source.free_wait_minutes  # docs/rules/flights.md#partner-policy, as sold
    if not flight_watch.watches(values["pickup_location"], values["flight_number"]):
        return False
    found = await flight_repository.find_watch(
        svc.db, values["flight_number"], values["airport_iata"], values["pickup_at"]
    )
    if found is not None and found.due(now):
        values["flight_watch_id"] = found.id
    elif found is None:
        values["flight_watch_id"] = await flight_repository.new_watch(
            svc.db, values["flight_number"], values["airport_iata"], values["pickup_at"], now
        )
    else:
        await flight_repository.make_due(svc.db, found.id, now)
        values["flight_watch_id"] = found.id
    return found is None or not flight_watch.answered_lately(found.checked_at, now)


async def watch_flight(conn: AsyncConnection, values: dict[str, Any], now: datetime) -> None:
    """The watch of a new booking's flight when it is watched (docs/rules/flights.md#watching: checked
    at creation, so the watch is due now), in the caller's transaction: a return trip's legs take
    theirs in the pair's one transaction."""
    if flight_watch.watches(values["pickup_location"], values["flight_number"]):
        values["flight_watch_id"] = await flight_repository.ensure_watch(
            conn, values["flight_number"], values["airport_iata"], values["pickup_at"], now
        )


# A hosted vehicle's seat for a new booking, on its pickup's own day (``bookings/hosted_capacity.py``), and its refusal:
# the return trip's pair claims one per hosted leg (docs/rules/return-trips.md#create).
seat_claim = hosted_capacity.claimer
VehicleFull = hosted_capacity.VehicleFull


RESERVATION_NO_CONSTRAINT = "uq_bookings_reservation_no"


def reservation_clash(exc: IntegrityError) -> bool:
    """The drawn reservation number is taken (draw another), told apart from every other unique
    violation (the client's Idempotency-Key above all) by the constraint's name, never by the
    message: PostgreSQL's message carries the key's values, and a client's key may say anything.
    asyncpg names the constraint (the direct path raises its error, the engine chains it as the
    cause); SQLite's message names the columns and no values."""
    for error in (exc.orig, getattr(exc.orig, "__cause__", None)):
        name = getattr(error, "constraint_name", None)
        if name is not None:
            return bool(name == RESERVATION_NO_CONSTRAINT)
    return str(exc.orig).endswith("bookings.reservation_no")


def booking_values(
    client: ClientPrincipal,
    search: SearchedTrip,
    offer: Offer,
    search_vehicle_id: int,
    request: BookingRequest,
    now: datetime,
    idempotency_key: str | None,
) -> dict[str, Any]:
    return {
        "client_id": client.client_id,
        "partner_id": offer.partner_id,
        "search_vehicle_id": search_vehicle_id,
        "status": BookingStatus.PENDING.value,
        "pay_type": client.pay_type,
        "airport_iata": search.airport_iata,
        "pickup_at": search.pickup_at,
        "original_pickup_at": search.pickup_at,  # docs/rules/flights.md#booking-fields: as booked
        "pickup_location": search.pickup_location,
        "dropoff_location": search.dropoff_location,
        "flight_number": request.flight_number,
        "extra_requests": request.extra_requests,
        "adult": search.adult,
        "children": search.children,
        "infant": search.infant,
        "passenger_name": request.name,
        "passenger_surname": request.surname,
        "passenger_email": request.email,
        "passenger_phone": request.phone,
        "suitcase": request.suitcase,
        "small_bags": request.small_bags,
        "vehicle_make": offer.make,
        "vehicle_model": offer.model,
        "vehicle_type": offer.type,
        "partner_vehicle_id": offer.partner_vehicle_id,
        "total": request.total,
        "net_total": request.net_total,
        "currency": offer.currency,
        "distance_km": search.distance_km,
        "booking_type": BOOKING_TYPE,
        "extras": [
            {
                "id": c.extra.id,
                "partner_extra_id": c.extra.partner_extra_id,
                "name": c.extra.name,
                "quantity": c.quantity,
                "price": money.text(c.extra.price, offer.currency),
                "label": c.label,
            }
            for c in request.extras
        ],
        "created_at": now,
        "updated_at": now,
        "idempotency_key": idempotency_key,
        # docs/rules/cancellation.md: sold with the policy the search showed for this vehicle
        "cancellation_policy": offer.cancellation_policy.public(),
        "event_sequence": 1,  # issue 14: booking.created is the booking's first client event
        "tracking_token": tracking.new_token(),  # docs/rules/ride.md#tracking-page: issued with the booking
    }


def start_flight_check(svc: Services, stored: Booking, check: bool) -> None:
    """The first check of a new booking's flight, beside the create's answer (docs/rules/flights.md#watching):
    handed to ``Background.batch`` (the checks of the creates that come in together are made together),
    never in the answer's way. ``check``: what ``flight_fields`` said (False: an unwatched flight, or
    one the provider answered for less than a minute ago; the worker's pass checks it). Only a
    PENDING_APPROVAL or APPROVED booking is checked: a declined or still pending one is not watched yet.
    The single create and each leg of a return trip call it alike."""
    if (
        check
        and svc.settings.flight_check_at_creation
        and stored.flight_watch_id is not None
        and stored.status.value in flight_repository.WATCHED_STATUSES
    ):
        svc.background.batch("flight-check", stored.flight_watch_id, functools.partial(_check_new, svc))


async def _check_new(svc: Services, watch_ids: list[int]) -> None:
    """The checks at creation of a batch of new bookings' flights (``Background.batch``)."""
    await flight_watch.check_new(svc.db, svc.clock, svc.settings, watch_ids)
