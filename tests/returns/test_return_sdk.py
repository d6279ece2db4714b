"""The SDK's return trip (docs/rules/return-trips.md) against the real service over HTTP: ``return_vehicles``
typed, ``create_trip`` answering both legs, ``Booking.trip``, and ``list_bookings(trip_id=...)``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import future_local, search_body
from tests.servers import LiveServer
from transfers_sdk import AsyncTransfersClient, TripLeg, ValidationFailed


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
