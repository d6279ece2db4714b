"""What a hosted partner's rate card offers for one trip, at which net price (docs/rules/hosted-partners.md). Pure.

Net price of a vehicle: the fixed price of the smallest radius that holds the trip (same airport,
``distance_km`` <= ``radius_km``), else ``max(minimum, base + per_km x distance_km)``; then the
night surcharge when the pickup's local time is in the window. Rounded half-up to the card currency's
decimals (``money.round_half_up``) at each
step a partner would print (the distance price, the surcharged price). The partner's markup is
not applied here: the search adds it as for any partner (``search/offers.py``).

Nothing is offered for a pickup sooner than ``min_lead_hours`` after the search, or on a blackout
date; both are judged in the airport's own time zone, because that is the calendar the partner's
drivers live by. A vehicle whose ``daily_capacity`` is used up on the local pickup date is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal

from transfers import money
from transfers.ratecards.card import CardExtra, CardVehicle, RateCard

HUNDRED = Decimal(100)


@dataclass(frozen=True, slots=True)
class Trip:
    airport: str  # IATA code, upper case
    tz: tzinfo  # the airport's time zone
    pickup_at: datetime  # aware
    distance_km: int
    searched_at: datetime  # aware

    @property
    def local_pickup(self) -> datetime:
        return self.pickup_at.astimezone(self.tz)

    @property
    def local_date(self) -> date:
        """The day a ``daily_capacity`` and the blackout dates count in."""
        return self.local_pickup.date()


@dataclass(frozen=True, slots=True)
class Quote:
    vehicle: CardVehicle
    net_price: Decimal
    currency: str
    extras: tuple[CardExtra, ...]


def refusal(card: RateCard, trip: Trip) -> str | None:
    """Why the card offers nothing at all for this trip, or None."""
    if trip.pickup_at - trip.searched_at < timedelta(hours=card.min_lead_hours):
        return f"pickup sooner than {card.min_lead_hours} h ahead"
    if trip.local_date in card.blackout_dates:
        return f"{trip.local_date.isoformat()} is a blackout date"
    return None


def vehicle_price(vehicle: CardVehicle, trip: Trip, currency: str) -> Decimal:
    """The vehicle's net price for the trip (before the partner's markup), in the card's ``currency``."""
    prices = vehicle.prices
    fixed = next(
        (
            f.price
            for f in prices.fixed  # sorted by radius: the smallest matching one wins
            if f.airport == trip.airport and trip.distance_km <= f.radius_km
        ),
        None,
    )
    price = (
        fixed
        if fixed is not None
        else max(prices.minimum, money.round_half_up(prices.base + prices.per_km * trip.distance_km, currency))
    )
    night = prices.night
    if night is not None and at_night(vehicle, trip):
        price = money.round_half_up(price * (HUNDRED + night.percent) / HUNDRED, currency)
    return price


def at_night(vehicle: CardVehicle, trip: Trip) -> bool:
    """Whether the trip's local pickup time is in the vehicle's night-surcharge window."""
    night = vehicle.prices.night
    return night is not None and night.covers(trip.local_pickup.time().replace(tzinfo=None))


def has_room(vehicle: CardVehicle, booked: int) -> bool:
    """``booked``: bookings of this vehicle already holding a seat on the local pickup date."""
    return vehicle.daily_capacity is None or booked < vehicle.daily_capacity


def quote(card: RateCard, trip: Trip, booked: Mapping[str, int] | None = None) -> list[Quote]:
    """Every vehicle the card offers for ``trip``, in card order (the search sorts by price).

    ``booked``: per vehicle id, the bookings already counted on the trip's local date (absent: 0)."""
    if refusal(card, trip) is not None:
        return []
    counts = booked or {}
    return [
        Quote(vehicle, vehicle_price(vehicle, trip, card.currency), card.currency, card.extras)
        for vehicle in card.vehicles
        if has_room(vehicle, counts.get(vehicle.id, 0))
    ]


def amendment_refusal(card: RateCard, vehicle_id: str, booked: Trip, moved: Trip, taken: int) -> str | None:
    """Why the card would not sell a booking of ``vehicle_id`` moved from ``booked`` to ``moved``, in words,
    or None (docs/rules/hosted-partners.md#amendments). The search's own checks, on the new pickup:
    ``refusal`` (the lead time, counted from ``moved.searched_at``: now; a blackout date), the vehicle still
    on the card, ``has_room`` on a new local date (``taken``: the seats held there; on the same date the
    booking keeps the seat it holds), and the same net price at both times (``vehicle_price``): the price
    of a booking never changes, so a move the card would price differently (into the night window, say)
    cannot be sold at the old price."""
    why = refusal(card, moved)
    if why is not None:
        return why
    vehicle = card.vehicle(vehicle_id)
    if vehicle is None:
        return f"the vehicle {vehicle_id} is no longer on the rate card"
    day = moved.local_date
    if day != booked.local_date and not has_room(vehicle, taken):
        return f"the vehicle {vehicle_id} is fully booked on {day.isoformat()} ({taken} of {vehicle.daily_capacity})"
    was, would_be = vehicle_price(vehicle, booked, card.currency), vehicle_price(vehicle, moved, card.currency)
    if would_be != was:
        night = at_night(vehicle, moved)
        why = "inside" if night else "outside"
        where = (
            f"is {why} the night-surcharge window" if night != at_night(vehicle, booked) else "is priced differently"
        )
        price, then = money.text(would_be, card.currency), money.text(was, card.currency)
        return f"that pickup time {where}: the rate card would price it {price} {card.currency}, not {then}"
    return None
