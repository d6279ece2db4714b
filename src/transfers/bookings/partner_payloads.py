"""What a partner receives about a booking (docs/partners/index.md, ``openapi/partner.yaml``), built
from its typed trip (``bookings/trip.py``): the ``POST /booking/create`` body, the amendment's
``PUT /booking/update`` body, and the reverse API's view of a booking it holds.

These are where the booking's JSON leaves for a partner, so they answer ``dict[str, Any]``.
"""

from __future__ import annotations

from typing import Any

from transfers import money
from transfers.bookings import ride_field
from transfers.bookings.models import Booking
from transfers.bookings.resource import flight_view
from transfers.bookings.state import BookingStatus
from transfers.bookings.trip import Trip


def create_payload(booking: Booking) -> dict[str, Any]:
    """``POST /booking/create`` of a new booking (``Booking.new`` of its values)."""
    trip = booking.trip
    return {
        "reservation_no": booking.reservation_no,
        "vehicle_id": trip.vehicle.partner_vehicle_id,
        "passenger_info": trip.passenger.contact(),
        "flight_info": flight_info(trip),
        "trip": trip_payload(trip),
        "extras": extras_payload(booking),
        "price": partner_price(booking),
    }


def flight_info(trip: Trip) -> dict[str, Any]:
    # docs/rules/return-trips.md#create: a way back booked without its departing flight sends null
    return {"flight_number": trip.flight.number or None, "extra_requests": trip.extra_requests}


def trip_payload(trip: Trip) -> dict[str, Any]:
    """The ``trip`` object of the create and the amendment: route, local pickup time, party, and
    (docs/rules/return-trips.md#create) the return trip's ``id`` and this ``leg``, both null for a single booking."""
    leg = trip.leg
    return {
        "from": trip.route.pickup.stored(),
        "to": trip.route.dropoff.stored(),
        "date": trip.local_pickup.isoformat(),
        "passengers": trip.party.passengers(),
        "suitcase": trip.party.suitcase,
        "small_bags": trip.party.small_bags,
        "id": leg.trip_id if leg is not None else None,
        "leg": leg.number if leg is not None else None,
    }


def extras_payload(booking: Booking) -> list[dict[str, Any]]:
    """The extras as the partner names them: its own ids and the quantities."""
    return [{"id": e["partner_extra_id"], "quantity": e["quantity"]} for e in booking.extras]


def partner_view(booking: Booking) -> dict[str, Any]:
    """What a partner may see of a booking it holds (reverse API ``GET /booking``): no client
    identity, no sell price or markup; the pickup in UTC."""
    trip = booking.trip
    return {
        "reservation_no": booking.reservation_no,
        "status": booking.status.value,
        "booking_details": {
            "partner_reference": trip.partner_reference,
            "vehicle_id": trip.vehicle.partner_vehicle_id,
            "vehicle": trip.vehicle.public(),
            "from": trip.route.pickup.stored(),
            "to": trip.route.dropoff.stored(),
            "pickup_datetime": trip.pickup_at.isoformat(),
            "flight_number": trip.flight.number or None,
            "extra_requests": trip.extra_requests,
            "passengers": trip.party.passengers(),
            "suitcase": trip.party.suitcase,
            "small_bags": trip.party.small_bags,
            "extras": [
                {"id": e["partner_extra_id"], "name": e["name"], "quantity": e["quantity"]} for e in booking.extras
            ],
            "price": partner_price(booking),
            "driver_info": trip.driver.public() if trip.driver is not None else None,
            "meeting_point": trip.meeting_point,
            # docs/rules/flights.md#disruption: the pickup as booked, the free wait and the flight as watched
            "original_pickup_datetime": trip.original_pickup_at.isoformat(),
            "free_wait_until": trip.free_wait_until.isoformat(),
            "flight": flight_view(trip),
            # docs/rules/return-trips.md#legs: the trip and the other leg (this partner may hold both)
            "trip": trip.leg.public() if trip.leg is not None else None,
        },
        "passenger_info": trip.passenger.contact(),
        # docs/rules/ride.md#ride-field: the ride at the top level, as the client sees it, without the
        # traveller's rating link (docs/rules/ratings.md#rating-page: the client's only)
        "ride": ride_field.partner_view(trip.ride, approved=booking.status is BookingStatus.APPROVED),
    }


def partner_price(booking: Booking) -> dict[str, str]:
    """The price a partner is told: its own net total in its own currency (docs/rules/fx.md#booking), the
    converted one never."""
    return {"total": money.text(booking.own_net_total, booking.own_currency), "currency": booking.own_currency}
