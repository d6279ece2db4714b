"""A booking as the code holds it: ``Booking`` (the stored row), ``BookingView`` (the columns the
BookingResource is built from, which GET and the client's list read) and ``ListedBooking`` (a line
of the operator's list).

Every field is the ``bookings`` column of that name (tests/unit/test_typed_rows.py pins them, and
that the resource reads nothing else). ``from_row`` takes a row mapping by a fixed field list and
validates nothing beyond naming the status: the rows were written by this service, and GET booking
builds one per request (docs/operations/performance-history.md#get-booking). The rows are read-only
(``transfers/rows.row_type``: frozen to the type checker, a plain slotted dataclass's cheap constructor at run time): a
status change answers a new ``Booking`` (``moved``), so a caller never holds a row that silently differs from what
was written.

How to add a field to the BookingResource: docs/architecture/how-to-add.md, "A field of the BookingResource".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from decimal import Decimal
from operator import itemgetter
from typing import Any

from transfers import money
from transfers.bookings.state import BookingStatus
from transfers.bookings.trip import Trip, trip_of
from transfers.rows import row_type


@row_type
class Booking:
    """One ``bookings`` row."""

    id: int
    reservation_no: str
    client_id: int
    partner_id: int
    search_vehicle_id: int | None
    status: BookingStatus
    pay_type: str  # wallet | reverse_api
    airport_iata: str
    pickup_at: datetime
    pickup_location: dict[str, Any]
    dropoff_location: dict[str, Any]
    flight_number: str
    extra_requests: str | None
    adult: int
    children: int
    infant: int
    passenger_name: str
    passenger_surname: str
    passenger_email: str
    passenger_phone: str
    suitcase: int
    small_bags: int
    vehicle_make: str
    vehicle_model: str
    vehicle_type: str
    partner_vehicle_id: str
    total: Decimal  # what the client pays (sell price of the vehicle and extras)
    net_total: Decimal  # what the partner is paid
    currency: str
    distance_km: int | None
    booking_type: str
    extras: list[dict[str, Any]]  # [{"id", "partner_extra_id", "name", "quantity", "price", "label"}]
    partner_reference: str | None
    driver_name: str | None
    driver_phone: str | None
    driver_plate: str | None
    meeting_point: str | None
    cancellation_reason_id: int | None
    cancel_note: str | None
    created_at: datetime
    updated_at: datetime
    idempotency_key: str | None
    synced_at: datetime | None
    cancel_idempotency_key: str | None
    event_sequence: int  # the ``sequence`` of the booking's last client event (docs/rules/webhooks.md)
    # docs/rules/cancellation.md: the policy it was sold with (JSON tiers; None: free until pickup), what a
    # cancellation cost and who made it, the latest amendment
    cancellation_policy: Any
    cancellation_fee: Decimal | None
    cancellation_refund: Decimal | None
    cancelled_at: datetime | None
    cancelled_by: str | None
    amendment: dict[str, Any] | None
    # docs/rules/ride.md#ride-field: the recorded driver events by occurred_at, the latest position
    ride_milestones: list[dict[str, Any]] | None
    ride_position: dict[str, Any] | None
    ride_position_at: datetime | None
    # docs/rules/ride.md#tracking-page: the traveller's page token, issued in the booking's INSERT
    tracking_token: str | None
    # docs/rules/incidents.md#resolve: the part of the price incidents refunded so far (None: nothing)
    incident_refunded: Decimal | None
    # docs/rules/flights.md: the pickup as booked, the flight as last checked, the disruption mark, the
    # partner's free wait as sold (None: the default), the flight watch it shares (None: not watched)
    original_pickup_at: datetime | None
    flight_state: dict[str, Any] | None
    flight_disrupted_at: datetime | None
    free_wait_minutes: int | None
    flight_watch_id: int | None
    # docs/rules/return-trips.md#legs: the trip it is a leg of, which leg, the other leg's reservation (None: single)
    trip_id: str | None
    trip_leg: int | None
    trip_other_reservation_no: str | None
    # docs/rules/fx.md#booking: the rate its price was converted at (None: not converted), and the partner's
    # own currency and net total (None: ``currency`` and ``net_total`` are the partner's)
    fx: dict[str, Any] | None
    partner_currency: str | None
    partner_net_total: Decimal | None
    # docs/rules/messages.md#settings: the passenger's language (a normalized BCP 47 tag; None: none given or
    # not one known) and the channels the create switched off (``{"email": false}``; None: none)
    passenger_language: str | None
    message_channels: dict[str, bool] | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> Booking:
        """From a row with (at least) every column, by name: a dict or a SQLAlchemy RowMapping."""
        values = list(_GET_BOOKING(row))
        values[_STATUS_AT] = BookingStatus(values[_STATUS_AT])
        return cls(*values)

    @classmethod
    def new(cls, values: Mapping[str, Any], booking_id: int) -> Booking:
        """A booking being created from its INSERT's ``values``: the columns a new booking leaves
        unset (driver, partner reference, cancellation, amendment, ...) are None."""
        return cls.from_row({**_UNSET, **values, "id": booking_id})

    @property
    def trip(self) -> Trip:
        """Its trip as one typed value (``bookings/trip.py``)."""
        return trip_of(self)

    @property
    def own_net_total(self) -> Decimal:
        """What the partner is told and paid, in ``own_currency``: its own net total when the price was
        converted (docs/rules/fx.md#booking), else ``net_total``."""
        return self.net_total if self.partner_net_total is None else self.partner_net_total

    @property
    def own_currency(self) -> str:
        """The partner's currency: ``partner_currency`` when the price was converted, else ``currency``."""
        return self.partner_currency or self.currency

    def moved(self, values: Mapping[str, Any]) -> Booking:
        """The row after an UPDATE that set ``values`` (column names; ``status`` as stored text). The
        values are plain values: a column the database computes (``x = x + 1``) is passed computed."""
        if "status" in values:
            values = {**values, "status": BookingStatus(values["status"])}
        return replace(self, **values)

    def as_dict(self) -> dict[str, Any]:
        """Every column by name (the operator CLI's JSON), the amounts as ``money.text`` writes them."""
        values = {name: getattr(self, name) for name in BOOKING_FIELDS}
        for name in MONEY_FIELDS:
            if values[name] is not None:
                values[name] = money.text(values[name], self.currency)
        return values


@row_type
class BookingView:
    """The columns ``bookings/resource.booking_resource`` reads (its ``trip`` and the rest), and only
    those: GET booking reads exactly these (decoding the other columns of a row was measurable on
    that path)."""

    reservation_no: str
    status: BookingStatus
    pickup_location: dict[str, Any]
    dropoff_location: dict[str, Any]
    pickup_at: datetime
    airport_iata: str
    flight_number: str
    extra_requests: str | None
    adult: int
    children: int
    infant: int
    passenger_name: str
    passenger_surname: str
    passenger_email: str
    passenger_phone: str
    suitcase: int
    small_bags: int
    vehicle_make: str
    vehicle_model: str
    vehicle_type: str
    partner_vehicle_id: str
    partner_reference: str | None
    total: Decimal
    currency: str
    distance_km: int | None
    booking_type: str
    extras: list[dict[str, Any]]
    driver_name: str | None
    driver_phone: str | None
    driver_plate: str | None
    meeting_point: str | None
    created_at: datetime
    cancellation_policy: Any
    cancellation_fee: Decimal | None
    cancellation_refund: Decimal | None
    incident_refunded: Decimal | None  # the shown cancellation.refund is net of it (cancellation.views.cancel_refund)
    cancelled_at: datetime | None
    cancelled_by: str | None
    amendment: dict[str, Any] | None
    ride_milestones: list[dict[str, Any]] | None
    ride_position: dict[str, Any] | None
    tracking_token: str | None  # the resource's ride.tracking_url (docs/rules/ride.md#ride-field)
    original_pickup_at: datetime | None
    flight_state: dict[str, Any] | None
    flight_disrupted_at: datetime | None
    free_wait_minutes: int | None
    trip_id: str | None  # the resource's trip (docs/rules/return-trips.md#legs)
    trip_leg: int | None
    trip_other_reservation_no: str | None
    fx: dict[str, Any] | None  # the resource's price.fx (docs/rules/fx.md#booking)

    @property
    def trip(self) -> Trip:
        return trip_of(self)

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> BookingView:
        values = list(_GET_VIEW(row))
        values[_VIEW_STATUS_AT] = BookingStatus(values[_VIEW_STATUS_AT])
        return cls(*values)


@dataclass(frozen=True, slots=True)
class ListedBooking:
    """A line of ``transfers bookings list``: the booking's key facts with its parties' names."""

    id: int
    reservation_no: str
    status: str
    client_id: int
    client_name: str
    partner_id: int
    partner_name: str
    airport_iata: str
    pickup_at: datetime
    total: Decimal
    net_total: Decimal
    currency: str
    created_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> ListedBooking:
        return cls(*[row[name] for name in LISTED_FIELDS])

    def as_dict(self) -> dict[str, Any]:
        """The line by name (``transfers bookings list --json``), the amounts as ``money.text`` writes them."""
        values = {name: getattr(self, name) for name in LISTED_FIELDS}
        return {
            **values,
            "total": money.text(self.total, self.currency),
            "net_total": money.text(self.net_total, self.currency),
        }


@row_type
class Transition:
    """One ``booking_transitions`` row: a status change (or a change of details, from and to the
    same status) with its actor and reason."""

    id: int
    booking_id: int
    from_status: str | None  # None: the creation
    to_status: str
    actor: str
    reason: str | None
    created_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> Transition:
        return cls(*[row[name] for name in TRANSITION_FIELDS])

    def as_dict(self) -> dict[str, Any]:
        """Every column by name (the operator CLI's JSON)."""
        return {name: getattr(self, name) for name in TRANSITION_FIELDS}


BOOKING_FIELDS = tuple(f.name for f in fields(Booking))
# The booking's amounts, all in its ``currency``.
MONEY_FIELDS = ("total", "net_total", "cancellation_fee", "cancellation_refund", "incident_refunded")
TRANSITION_FIELDS = tuple(f.name for f in fields(Transition))
VIEW_FIELDS = tuple(f.name for f in fields(BookingView))
LISTED_FIELDS = tuple(f.name for f in fields(ListedBooking))
# The columns in field order, looked up in C (``itemgetter``), then the status named.
_GET_BOOKING = itemgetter(*BOOKING_FIELDS)
_GET_VIEW = itemgetter(*VIEW_FIELDS)
_STATUS_AT = BOOKING_FIELDS.index("status")
_UNSET: dict[str, Any] = dict.fromkeys(BOOKING_FIELDS)
# A fast creation's ``Change`` is built before its statement's INSERT assigns the id (its rows name it BOOKING_ID).
UNASSIGNED_ID = 0
_VIEW_STATUS_AT = VIEW_FIELDS.index("status")
