"""The SDK's return trip (docs/rules/return-trips.md) against the real service over HTTP: ``return_vehicles``
typed, ``create_trip`` answering both legs, ``Booking.trip``, and ``list_bookings(trip_id=...)``."""

from __future__ import annotations

import asyncio
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import future_local, search_body
from tests.servers import LiveServer
from transfers_sdk import Airport, AsyncTransfersClient, Point, SearchResult, TransfersClient, TripLeg, ValidationFailed


async def test_the_sdk_books_and_lists_a_return_trip(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="300.00")
    await make_partner()
    async with AsyncTransfersClient(service.url, key) as api:
        one_way = await api.search(search_body())
        assert one_way.return_vehicles is None
        found = await api.search(search_body(return_datetime=future_local(days=15, hour=9, minute=45)))
        assert found.return_vehicles is not None and len(found.return_vehicles) == 2
        back_car = found.return_vehicles[0]
        assert back_car.vehicle_id not in {v.vehicle_id for v in found.vehicles}
        passenger = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}
        with pytest.raises(ValidationFailed) as refused:
            await api.create_trip(
                found.search_id, found.vehicles[0].vehicle_id, 99, passenger, {"flight_number": "BA1"}
            )
        assert refused.value.code == 1022
        out, back = await api.create_trip(
            found.search_id,
            found.vehicles[0].vehicle_id,
            back_car.vehicle_id,
            passenger,
            {"flight_number": "BA117"},
            return_travel_details={"flight_number": "BA118"},
        )
        assert isinstance(out.trip, TripLeg) and isinstance(back.trip, TripLeg)
        assert out.trip.id == back.trip.id and (out.trip.leg, back.trip.leg) == (1, 2)
        assert out.trip.other_reservation_no == back.reservation_no
        assert back.flight_number == "BA118" and back.price.total == Decimal("40.00")
        page = await api.list_bookings(trip_id=out.trip.id)
        assert {b.reservation_no for b in page.bookings} == {out.reservation_no, back.reservation_no}
        assert (await api.get_booking(back.reservation_no)).trip == back.trip


async def test_the_sdk_keyword_search_takes_a_return_datetime(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """``search(..., return_datetime=...)`` as a string or a naive ``datetime`` (local at the airport,
    like ``pickup_datetime``): the answer has ``return_vehicles``; without it none; a bad one is 1324."""
    _, key = await make_client()
    await make_partner()
    pickup = future_local(days=15, hour=9, minute=0)
    keywords: dict[str, Any] = {
        "pickup_datetime": pickup,
        "pickup": Airport("LHR"),
        "dropoff": Point(51.5074, -0.1278, "Trafalgar Square, London"),
        "adult": 2,
    }
    back = future_local(days=18, hour=17, minute=30)
    async with AsyncTransfersClient(service.url, key) as api:
        assert (await api.search(**keywords)).return_vehicles is None
        as_text = await api.search(**keywords, return_datetime=back)
        as_datetime = await api.search(**keywords, return_datetime=datetime.strptime(back, "%Y-%m-%d %H:%M"))
        for found in (as_text, as_datetime):
            assert found.return_vehicles is not None and len(found.return_vehicles) == 2
            assert {v.vehicle_id for v in found.return_vehicles}.isdisjoint(v.vehicle_id for v in found.vehicles)
        with pytest.raises(ValidationFailed) as refused:
            await api.search(**keywords, return_datetime=pickup)  # not 1 h after the way out
        assert refused.value.code == 1324
        # and the pair books from the keyword search
        passenger = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}
        out, way_back = await api.create_trip(
            as_text.search_id,
            as_text.vehicles[0].vehicle_id,
            as_text.return_vehicles[0].vehicle_id,
            passenger,
            {"flight_number": "BA117"},
        )
        assert out.trip is not None and way_back.trip is not None and way_back.trip.leg == 2
        assert way_back.flight_number is None


async def test_the_sync_sdk_keyword_search_takes_a_return_datetime(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """The same keyword on the synchronous client (from a thread, as the SDK's own sync test)."""
    _, key = await make_client()
    await make_partner()

    def search() -> SearchResult:
        with TransfersClient(service.url, key) as api:
            return api.search(
                pickup_datetime=future_local(days=15, hour=9, minute=0),
                pickup=Airport("LHR"),
                dropoff=Point(51.5074, -0.1278, "Trafalgar Square, London"),
                adult=2,
                return_datetime=future_local(days=16, hour=12, minute=0),
            )

    found = await asyncio.to_thread(search)
    assert found.return_vehicles is not None and len(found.return_vehicles) == 2
