"""The pieces of a new booking shared by the single create (``bookings/service.py``) and a return
trip's pair (``returns/service.py``): its column values, a hosted seat's claim and the
reservation number's clash (what the features add to a new booking, its flight's watch above all, they
add through ``bookings/hooks.py``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.exc import IntegrityError

from transfers import money
from transfers.bookings import hosted_capacity, tracking_link
from transfers.bookings.repository import OfferSource
from transfers.bookings.rules import BookingRequest
from transfers.bookings.state import BookingStatus
from transfers.clients.models import ClientPrincipal
from transfers.partners.client import PartnerEndpoint
from transfers.partners.service import endpoint_of
from transfers.partners.wire import BOOKING_TYPE
from transfers.search.offers import Offer, SearchedTrip
from transfers.services import Services

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
        "event_sequence": 1,  # booking.created is the booking's first client event
        "tracking_token": tracking_link.new_token(),  # docs/rules/ride.md#tracking-page: issued with the booking
        # docs/rules/fx.md#booking: the price as the search converted it, never again; the partner's own amounts
        "fx": offer.fx,
        "partner_currency": offer.partner_currency,
        "partner_net_total": partner_net_total(offer, request),
        # docs/rules/messages.md#settings: the passenger's language and the channels this booking switched off
        "passenger_language": request.language,
        "message_channels": request.message_channels,
    }


def partner_net_total(offer: Offer, request: BookingRequest) -> Decimal | None:
    """The partner's own net total of a converted offer (its vehicle's and chosen extras' own prices, in its
    currency), or None when nothing was converted (``net_total`` is the partner's then)."""
    if offer.partner_net_price is None:
        return None
    return offer.partner_net_price + sum(
        ((c.extra.partner_net_price or Decimal(0)) * c.charged_units for c in request.extras), Decimal(0)
    )


def source_endpoint(svc: Services, source: OfferSource) -> PartnerEndpoint:
    """The partner endpoint a booking's create call goes to, from the offer's partner as the create read
    it (the single create and each leg of a return trip)."""
    return endpoint_of(
        source.partner_id,
        source.partner_name,
        source.base_url,
        source.token_enc,
        source.secret_enc,
        svc.box,
        previous_secret_enc=source.previous_secret_enc,
        previous_until=source.previous_until,
        hosted=source.hosted,
    )
