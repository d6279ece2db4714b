"""The row dataclasses are the tables' columns: a field that is not a column (or a column the type
forgets) fails here, before any statement runs. Adding a column means adding the field, and the
statements built from the field lists follow."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from transfers.db.tables import outbox, search_vehicles, searches
from transfers.outbox import repository as outbox_repo
from transfers.outbox.models import (
    NEW_MESSAGE_FIELDS,
    OUTBOX_MESSAGE_FIELDS,
    PENDING,
    ListedMessage,
    OutboxMessage,
)
from transfers.search.offers import OFFER_FIELDS, SEARCHED_TRIP_FIELDS, Offer, OfferedExtra, SearchedTrip


def columns(table: object, *, without: tuple[str, ...] = ()) -> set[str]:
    return {c.name for c in table.c if c.name not in without}  # type: ignore[attr-defined]


OFFER = Offer(vehicle_no=2, partner_id=5, partner_vehicle_id="sedan-1", make="Škoda", model="Octavia", type="Sedan",
              max_passengers=4, suitcases=3, small_bags=2, net_price=Decimal("36.00"), sell_price=Decimal("39.60"),
              currency="EUR", extras=(OfferedExtra(1, "seat", "Child seat", "PER_ITEM", Decimal("4.00"),
                                                   Decimal("4.40")),))


def test_an_offer_is_a_search_vehicles_row_without_its_keys() -> None:
    assert set(OFFER_FIELDS) == columns(search_vehicles, without=("id", "search_pk"))
    assert tuple(f.name for f in fields(Offer)) == OFFER_FIELDS


def test_an_offer_stores_every_column_and_reads_back_equal() -> None:
    stored = OFFER.stored()
    assert set(stored) == set(OFFER_FIELDS)
    assert stored["extras"] == [{"id": 1, "partner_extra_id": "seat", "name": "Child seat",
                                 "pricing_type": "PER_ITEM", "net_price": "4.00", "price": "4.40"}]
    assert Offer.from_row(stored) == OFFER
    assert Offer.from_row({f"v_{k}": v for k, v in stored.items()}, "v_") == OFFER


def test_an_offer_finds_its_extras_by_id_only() -> None:
    assert OFFER.find_extra(1) == OFFER.extras[0]
    assert OFFER.find_extra(2) is None


def test_the_public_vehicle_comes_from_the_offer() -> None:
    public = OFFER.public("Acme Cars")
    assert public["vehicle_id"] == "2" and public["price"] == Decimal("39.60") and public["company"] == "Acme Cars"
    assert public["extra_services"] == [{"id": 1, "name": "Child seat", "price": Decimal("4.40"),
                                         "pricing_type": "PER_ITEM"}]


def test_a_searched_trip_is_part_of_a_searches_row() -> None:
    assert set(SEARCHED_TRIP_FIELDS) <= columns(searches)
    row = {"id": 9, "airport_iata": "LHR", "pickup_at": datetime(2030, 1, 1, tzinfo=UTC),
           "pickup_location": {"lat": 1}, "dropoff_location": {"lat": 2}, "adult": 2, "children": 1, "infant": 0,
           "distance_km": None}
    assert set(row) == set(SEARCHED_TRIP_FIELDS)
    assert SearchedTrip.from_row(row) == SearchedTrip(**row)


def test_an_outbox_message_is_an_outbox_row() -> None:
    assert set(OUTBOX_MESSAGE_FIELDS) == columns(outbox)
    assert set(NEW_MESSAGE_FIELDS) == columns(outbox, without=("id", "booking_id", "last_error", "finished_at"))
    assert outbox_repo.MESSAGE_KEYS == NEW_MESSAGE_FIELDS  # what the fast statements bind


def test_a_new_message_is_pending_and_stored_with_its_ids() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    new = outbox_repo.new_message(partner_id=4, kind="booking.create", payload={"reservation_no": "TB-1"}, now=now,
                                  deadline=now + timedelta(hours=24), not_before=None, lease_until=None)
    assert (new.status, new.attempts, new.next_attempt_at) == (PENDING, 0, now)
    assert new.webhook_id.startswith("msg_")
    stored = new.stored(11, 22)
    assert (stored.id, stored.booking_id, stored.last_error, stored.finished_at) == (11, 22, None, None)
    assert {k: v for k, v in stored.as_dict().items() if k in NEW_MESSAGE_FIELDS} == new.values()
    assert OutboxMessage.from_row(stored.as_dict()) == stored
    assert stored.reservation_no == "TB-1"
    listed = ListedMessage(stored, "TB-1", "Acme Cars").as_dict()
    assert set(listed) == (columns(outbox) - {"payload"}) | {"reservation_no", "partner_name"}
