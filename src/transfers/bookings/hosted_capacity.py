"""A hosted vehicle's daily capacity, claimed and given back with the booking (docs/rules/hosted-partners.md).

The claim runs inside the booking's create transaction (``bookings/fast_paths.store_created``'s
``before``), so a booking and its seat commit or roll back together; the counter's conditional
UPDATE (``ratecards/repository.claim_seat``) makes two concurrent claims for the last seat of a day
impossible, from any number of API processes. A seat is given back when the booking ends without a
ride (cancelled, declined, failed): ``lifecycle``'s ``capacity`` side effect.

In ``bookings`` (not ``hosted``) because only the booking's own changes claim, move and give back a
seat, and everything it reads (the card, the counters: ``ratecards``) sits below ``bookings``. For the
same reason a client's amendment of a hosted booking is judged against the card here
(``amendment_refusal``, with the search's own checks of ``ratecards/pricing.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.errors import Conflict
from transfers.ratecards import pricing
from transfers.ratecards import repository as repo
from transfers.ratecards.card import load_stored
from transfers.reference.airports import find_airport, great_circle_km


class VehicleFull(Conflict):
    """No seat left for that vehicle on that local date (or the partner has since blacked it out,
    or taken the vehicle off its card)."""


def local_pickup_date(airport_iata: str, pickup_at: datetime) -> date:
    """The day a capacity counts in: the pickup's date in the airport's time zone."""
    airport = find_airport(airport_iata)
    return (pickup_at.astimezone(airport.tz) if airport is not None else pickup_at).date()


def claimer(values: Mapping[str, Any]) -> Callable[[AsyncConnection], Awaitable[None]]:
    """The claim of the seat a new booking (``values``: its columns) needs, to run in its create
    transaction; it raises VehicleFull and then the whole transaction rolls back."""
    partner_id, vehicle_id = int(values["partner_id"]), str(values["partner_vehicle_id"])
    day = local_pickup_date(values["airport_iata"], values["pickup_at"])

    async def claim(conn: AsyncConnection) -> None:
        stored = await repo.get_card(conn, partner_id)
        card = load_stored(stored) if stored is not None else None
        vehicle = card.vehicle(vehicle_id) if card is not None else None
        if card is None or vehicle is None or day in card.blackout_dates:
            raise VehicleFull(f"{vehicle_id} is not offered on {day.isoformat()} any more")
        if not await repo.claim_seat(
            conn, partner_id=partner_id, vehicle_id=vehicle_id, local_date=day, capacity=vehicle.daily_capacity
        ):
            raise VehicleFull(f"{vehicle_id} is fully booked on {day.isoformat()}")

    return claim


async def release(conn: AsyncConnection, booking: Booking) -> None:
    """Give back the seat ``booking`` held (nothing for a server partner's booking: it held none)."""
    await repo.release_seat(
        conn,
        partner_id=booking.partner_id,
        vehicle_id=booking.partner_vehicle_id,
        local_date=local_pickup_date(booking.airport_iata, booking.pickup_at),
    )


async def move(conn: AsyncConnection, booking: Booking, new_pickup_at: datetime) -> None:
    """The seat follows the pickup to its new local date when the pickup moved across midnight (a flight
    shift, docs/rules/flights.md#pickup-moves, or an amendment): the capacity counts from the current
    pickup. The new day's seat is taken without a limit: the flight decided the move, not the partner's
    capacity. Nothing for a server partner's booking (it held no seat)."""
    old = local_pickup_date(booking.airport_iata, booking.pickup_at)
    new = local_pickup_date(booking.airport_iata, new_pickup_at)
    if old == new:
        return
    partner_id, vehicle_id = booking.partner_id, booking.partner_vehicle_id
    if await repo.release_seat(conn, partner_id=partner_id, vehicle_id=vehicle_id, local_date=old):
        await repo.claim_seat(conn, partner_id=partner_id, vehicle_id=vehicle_id, local_date=new, capacity=None)


async def amendment_refusal(
    conn: AsyncConnection, booking: Booking, new_pickup_at: datetime, now: datetime, *, lock: bool = False
) -> str | None:
    """docs/rules/hosted-partners.md#amendments: why the partner's rate card would not sell ``booking`` at
    ``new_pickup_at`` (a blackout date, a full day, inside the lead time, another price), in words, or None.
    None for a server partner's booking: no card, its own server answers the amendment. Reads the card and,
    for a move to another local date of a vehicle with a daily capacity, that day's counter, in the
    caller's transaction. ``lock``: as the amendment is applied, the counter row is read locked
    (``repo.seats_taken_locked``) and the seat moves in the same transaction, so two amendments applied
    at once cannot both take a day's last seat."""
    stored = await repo.get_card(conn, booking.partner_id)
    airport = find_airport(booking.airport_iata)
    if stored is None or airport is None:
        return None
    card = load_stored(stored)
    point = next(
        (p for p in (booking.pickup_location, booking.dropoff_location) if p.get("type") != "AIRPORT"),
        {"lat": airport.lat, "lng": airport.lng},
    )
    # the search's own distance figure: great-circle from the airport to the trip's other end
    distance = round(great_circle_km(airport.lat, airport.lng, float(point["lat"]), float(point["lng"])))
    booked = pricing.Trip(airport.iata, airport.tz, booking.pickup_at, distance, now)
    moved = pricing.Trip(airport.iata, airport.tz, new_pickup_at, distance, now)
    taken = 0
    vehicle_id = booking.partner_vehicle_id
    if moved.local_date != booked.local_date and lock:
        day = moved.local_date
        taken = await repo.seats_taken_locked(
            conn, partner_id=booking.partner_id, vehicle_id=vehicle_id, local_date=day
        )
    elif moved.local_date != booked.local_date:
        taken = (await repo.booked_on(conn, booking.partner_id, moved.local_date)).get(vehicle_id, 0)
    return pricing.amendment_refusal(card, booking.partner_vehicle_id, booked, moved, taken)
