"""The row dataclasses are the tables' columns: a field that is not a column (or a column the type
forgets) fails here, before any statement runs. Adding a column means adding the field, and the
statements built from the field lists follow."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tests.helpers import booking_row
from transfers import money
from transfers.api.schemas import BookingResource
from transfers.bookings.models import (
    BOOKING_FIELDS,
    LISTED_FIELDS,
    MONEY_FIELDS,
    VIEW_FIELDS,
    Booking,
    BookingView,
    ListedBooking,
)
from transfers.bookings.resource import RESOURCE_FIELDS, booking_resource
from transfers.bookings.state import BookingStatus
from transfers.db.tables import bookings, outbox, search_vehicles, searches
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import (
    NEW_MESSAGE_FIELDS,
    OUTBOX_MESSAGE_FIELDS,
    PENDING,
    ListedMessage,
    OutboxMessage,
)
from transfers.search.offers import OFFER_FIELDS, SEARCHED_TRIP_FIELDS, Offer, OfferedExtra, SearchedTrip


def columns(table: object, *, without: tuple[str, ...] = ()) -> set[str]:
    return {c.name for c in table.c if c.name not in without}  # type: ignore[attr-defined]


OFFER = Offer(
    vehicle_no=2,
    partner_id=5,
    partner_vehicle_id="sedan-1",
    make="Škoda",
    model="Octavia",
    type="Sedan",
    max_passengers=4,
    suitcases=3,
    small_bags=2,
    net_price=Decimal("36.00"),
    sell_price=Decimal("39.60"),
    currency="EUR",
    extras=(OfferedExtra(1, "seat", "Child seat", "PER_ITEM", Decimal("4.00"), Decimal("4.40")),),
)


def test_an_offer_is_a_search_vehicles_row_without_its_keys() -> None:
    assert set(OFFER_FIELDS) == columns(search_vehicles, without=("id", "search_pk"))
    assert tuple(f.name for f in fields(Offer)) == OFFER_FIELDS


def test_an_offer_stores_every_column_and_reads_back_equal() -> None:
    stored = OFFER.stored()
    assert set(stored) == set(OFFER_FIELDS)
    assert stored["extras"] == [
        {
            "id": 1,
            "partner_extra_id": "seat",
            "name": "Child seat",
            "pricing_type": "PER_ITEM",
            "net_price": "4.00",
            "price": "4.40",
        }
    ]
    assert Offer.from_row(stored) == OFFER
    assert Offer.from_row({f"v_{k}": v for k, v in stored.items()}, "v_") == OFFER


def test_an_offer_finds_its_extras_by_id_only() -> None:
    assert OFFER.find_extra(1) == OFFER.extras[0]
    assert OFFER.find_extra(2) is None


def test_the_public_vehicle_comes_from_the_offer() -> None:
    public = OFFER.public("Acme Cars")
    assert public["vehicle_id"] == "2" and public["price"] == Decimal("39.60") and public["company"] == "Acme Cars"
    assert public["extra_services"] == [
        {"id": 1, "name": "Child seat", "price": Decimal("4.40"), "pricing_type": "PER_ITEM"}
    ]


def test_a_searched_trip_is_part_of_a_searches_row() -> None:
    assert set(SEARCHED_TRIP_FIELDS) <= columns(searches)
    row = {
        "id": 9,
        "airport_iata": "LHR",
        "pickup_at": datetime(2030, 1, 1, tzinfo=UTC),
        "pickup_location": {"lat": 1},
        "dropoff_location": {"lat": 2},
        "adult": 2,
        "children": 1,
        "infant": 0,
        "distance_km": None,
        "return_pickup_at": datetime(2030, 1, 8, tzinfo=UTC),
    }
    assert set(row) == set(SEARCHED_TRIP_FIELDS)
    assert SearchedTrip.from_row(row) == SearchedTrip(**row)


def test_an_outbox_message_is_an_outbox_row() -> None:
    assert set(OUTBOX_MESSAGE_FIELDS) == columns(outbox)
    assert set(NEW_MESSAGE_FIELDS) == columns(outbox, without=("id", "booking_id", "last_error", "finished_at"))


def test_a_new_message_is_pending_and_stored_with_its_ids() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    new = outbox_repo.new_message(
        partner_id=4,
        kind="booking.create",
        payload={"reservation_no": "TB-1"},
        now=now,
        deadline=now + timedelta(hours=24),
        not_before=None,
        lease_until=None,
    )
    assert (new.status, new.attempts, new.next_attempt_at) == (PENDING, 0, now)
    assert new.webhook_id.startswith("msg_")
    stored = new.stored(11, 22)
    assert (stored.id, stored.booking_id, stored.last_error, stored.finished_at) == (11, 22, None, None)
    assert {k: v for k, v in stored.as_dict().items() if k in NEW_MESSAGE_FIELDS} == new.values()
    assert OutboxMessage.from_row(stored.as_dict()) == stored
    assert stored.reservation_no == "TB-1"
    listed = ListedMessage(stored, "TB-1", "Acme Cars").as_dict()
    assert set(listed) == (columns(outbox) - {"payload"}) | {"reservation_no", "partner_name"}


# --- bookings ------------------------------------------------------------------------------------


def test_a_booking_is_a_bookings_row() -> None:
    """A column added to ``bookings`` (a migration and db/tables/bookings.py) is added to ``Booking`` too
    (bookings/models.py); the repository reads it from then on."""
    assert set(BOOKING_FIELDS) == columns(bookings), (
        f"bookings columns without a Booking field: {sorted(columns(bookings) - set(BOOKING_FIELDS))}; "
        f"Booking fields that are no column: {sorted(set(BOOKING_FIELDS) - columns(bookings))}"
    )
    assert set(booking_row()) == columns(bookings)


def test_a_booking_reads_back_typed_and_moves_without_changing_in_place() -> None:
    booking = Booking.from_row(booking_row())
    assert booking.status is BookingStatus.APPROVED
    amounts = {k: money.text(v, "EUR") for k, v in booking_row().items() if k in MONEY_FIELDS and v is not None}
    assert booking.as_dict() == {**booking_row(), "status": BookingStatus.APPROVED, **amounts}
    moved = booking.moved({"status": "CANCELLED", "cancel_note": "flight cancelled"})
    assert (moved.status, moved.cancel_note) == (BookingStatus.CANCELLED, "flight cancelled")
    assert (booking.status, booking.cancel_note) == (BookingStatus.APPROVED, None)
    with pytest.raises(TypeError):
        booking.moved({"no_such_column": 1})  # a column Booking does not know is a bug, not a silent drop


def test_the_resource_is_built_from_the_view_fields_only() -> None:
    """``BookingView`` (what GET booking reads) holds only ``bookings`` columns, and building the
    resource from it works: the resource reads nothing else (a slotted dataclass has no other
    attribute). The resource from the whole row is the same, and it is the published shape."""
    assert set(VIEW_FIELDS) <= columns(bookings)
    assert RESOURCE_FIELDS == VIEW_FIELDS
    now = datetime(2030, 5, 1, 10, 0, tzinfo=UTC)
    view = BookingView.from_row(booking_row())
    resource = booking_resource(view, now)
    assert resource == booking_resource(Booking.from_row(booking_row()), now)
    assert set(resource) == set(BookingResource.model_fields)
    BookingResource.model_validate(resource)  # extra="forbid": no field the schema does not publish
    assert resource["driver"] == {"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"}
    assert resource["extra_services"] == ["Child seat x 2"] and resource["price"] == {
        "total": "44.00",
        "currency": "EUR",
        "fx": None,  # nothing converted
    }


def test_an_operator_list_line_holds_bookings_columns_and_the_parties_names() -> None:
    assert set(LISTED_FIELDS) - {"client_name", "partner_name"} <= columns(bookings)
    row = {**booking_row(), "client_name": "Acme Travel", "partner_name": "Acme Cars"}
    listed = ListedBooking.from_row(row)
    amounts = {"total": money.text(row["total"], "EUR"), "net_total": money.text(row["net_total"], "EUR")}
    assert listed.as_dict() == {**{name: row[name] for name in LISTED_FIELDS}, **amounts}


# --- the other repositories' rows, and the trip -----------------------------------------


def test_the_other_repository_rows_are_their_tables_columns() -> None:
    from transfers.auth.repository import _LOOKUP, KEY_OWNER_FIELDS
    from transfers.bookings.models import TRANSITION_FIELDS
    from transfers.db.tables import (
        booking_transitions,
        ledger_entries,
        operators,
        partner_emails,
        partner_users,
        partners,
        web_sessions,
    )
    from transfers.hosted import mail_repository as hosted_mail
    from transfers.hosted import repository as hosted
    from transfers.operators.repository import LISTED_OPERATOR_FIELDS, OPERATOR_FIELDS
    from transfers.wallet.ledger import LEDGER_ENTRY_FIELDS, STATEMENT_LINE_FIELDS
    from transfers.webauth.repository import SESSION_FIELDS

    assert set(TRANSITION_FIELDS) == columns(booking_transitions)
    assert set(LEDGER_ENTRY_FIELDS) == columns(ledger_entries)
    assert set(STATEMENT_LINE_FIELDS) - {"reservation_no"} <= columns(ledger_entries)
    assert set(OPERATOR_FIELDS) == columns(operators)
    assert set(LISTED_OPERATOR_FIELDS) == columns(operators, without=("password_hash",))
    assert tuple(c.key for c in _LOOKUP.statement.selected_columns) == KEY_OWNER_FIELDS
    assert set(SESSION_FIELDS) == columns(web_sessions)
    assert set(hosted_mail.EMAIL_FIELDS) == columns(partner_emails)
    assert set(hosted.PARTNER_USER_FIELDS) == columns(partner_users)
    assert set(hosted.LISTED_PARTNER_USER_FIELDS) == columns(partner_users, without=("partner_id", "password_hash"))
    assert set(hosted.PORTAL_PARTNER_FIELDS) | set(hosted.HOSTED_PARTNER_FIELDS) <= columns(partners)


def test_the_console_rows_are_their_statements_columns() -> None:
    """The console's lines are read by field name (``console/rows.names``): each name is a column of
    its table, or one of the few labels the statement adds (a party's name, the wallet's id)."""
    from transfers.console import admin_queries, queries, rows
    from transfers.db.tables import admin_audit, api_keys, clients, outbox, partners, wallets

    assert set(rows.names(rows.AuditEntry)) == columns(admin_audit)
    assert set(rows.names(rows.LastCheck)) <= columns(admin_audit)
    assert set(rows.names(rows.BookingLine)) - {"client_name", "partner_name"} <= columns(bookings)
    assert set(rows.names(rows.ClientDetail)) == columns(clients) | {"wallet_id", "currency", "balance"}
    assert set(rows.names(rows.ClientLine)) <= columns(clients) | columns(wallets)
    assert set(rows.names(rows.KeyLine)) <= columns(api_keys)
    assert set(rows.names(rows.ConsolePartner)) <= columns(partners)
    assert set(rows.names(rows.DeliveryLine)) == (columns(outbox) - {"payload", "lease_until", "booking_id"}) | {
        "partner_name",
        "reservation_no",
    }
    # the statements select the fields in order (each line is built positionally from its row)
    assert tuple(c.key for c in queries._LINE_COLUMNS) == rows.names(rows.BookingLine)
    assert tuple(c.key for c in admin_queries._DELIVERY_COLUMNS) == rows.names(rows.DeliveryLine)
    assert tuple(c.key for c in admin_queries._client_columns(rows.ClientDetail)) == rows.names(rows.ClientDetail)


def test_a_delivery_attempt_is_a_delivery_attempts_row() -> None:
    from transfers.db.tables import delivery_attempts
    from transfers.delivery.models import DELIVERY_ATTEMPT_FIELDS, DeliveryAttempt

    assert set(DELIVERY_ATTEMPT_FIELDS) == columns(delivery_attempts)
    assert tuple(f.name for f in fields(DeliveryAttempt)) == DELIVERY_ATTEMPT_FIELDS


def test_the_webhook_rows_are_their_statements_columns() -> None:
    """The webhooks' rows are built positionally from their statements: each select list is the
    row's field list, in order, and each field a column of its table (or a label naming one)."""
    from transfers.db.tables import client_events, webhook_endpoints
    from transfers.webhooks import models, operators
    from transfers.webhooks import repository as hooks

    assert set(models.names(models.Endpoint)) == columns(webhook_endpoints)
    assert set(models.names(models.ClientEvent)) == columns(client_events)
    assert set(models.names(models.SigningTarget)) | set(models.names(models.Subscriber)) <= columns(webhook_endpoints)
    assert tuple(c.key for c in hooks._CLAIMED) == models.names(models.WebhookDelivery)
    assert tuple(c.key for c in operators._LISTED) == models.OPERATOR_DELIVERY_FIELDS
    assert tuple(c.key for c in operators._LOCKED) == models.names(models.RetryTarget)


def test_the_trip_is_built_from_the_booking_columns() -> None:
    from transfers.bookings.trip import Driver, Place

    booking = Booking.from_row(booking_row())
    trip = booking.trip
    assert trip == BookingView.from_row(booking_row()).trip
    assert trip.route.pickup == Place("airport", "Heathrow", "LHR")
    assert (trip.route.airport_iata, trip.route.distance_km) == ("LHR", 24)
    assert (trip.pickup_at, trip.flight.number, trip.partner_reference) == (booking.pickup_at, "BA117", "P-1")
    assert trip.party.passengers() == {"adult": 2, "children": 1, "infant": 0}
    assert (trip.party.suitcase, trip.party.small_bags) == (2, 1)
    assert trip.passenger.contact()["surname"] == "Lovelace"
    assert trip.vehicle.partner_vehicle_id == "sedan-1"
    assert (trip.driver, trip.meeting_point) == (Driver("Jo", "+447400123457", "AB12 CDE"), "Arrivals, Costa")
    assert Booking.from_row(booking_row(driver_name=None)).trip.driver is None
    with pytest.raises(AttributeError):
        trip.flight.number = "XX1"  # type: ignore[misc]  # frozen


def test_a_place_stores_back_the_locations_the_service_writes_key_for_key() -> None:
    """The partner payloads send a stored location as it was written: same keys, same order."""
    from transfers.bookings.trip import Place

    airport = {"type": "AIRPORT", "iata_code": "LHR", "name": "Heathrow", "lat": 51.47, "lng": -0.4543}
    point = {"type": "POINT", "name": "1 Main St", "lat": 51.5, "lng": -0.12}
    for stored in (airport, point):
        assert list(Place.from_stored(stored).stored().items()) == list(stored.items())
    assert Place.from_stored(point).label == "1 Main St" and Place("AIRPORT", None, "LHR").label == "LHR"


def test_the_partner_payloads_come_from_the_trip() -> None:
    from transfers.bookings.partner_payloads import create_payload, partner_view

    booking = Booking.from_row(booking_row())
    created = create_payload(booking)
    assert created["trip"]["from"] == booking.pickup_location and created["trip"]["date"].endswith("+01:00")
    assert created["passenger_info"]["email"] == "ada@example.com" and created["vehicle_id"] == "sedan-1"
    assert created["price"] == {"total": "40.00", "currency": "EUR"}
    view = partner_view(booking)["booking_details"]
    assert view["driver_info"] == {"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"}
    assert view["pickup_datetime"] == booking.pickup_at.isoformat() and view["partner_reference"] == "P-1"
