"""The SDK's ``rate_ride`` and ``Ride.rating_url`` against the real service (docs/rules/ratings.md#api):
the link appears at the drop-off, a rating is recorded once, and the codes arrive as ``InvalidRequest``."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.ratings.helpers import dropped_off_ride
from tests.servers import LiveServer
from transfers.bookings.rating_link import rating_token
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers_sdk import AsyncTransfersClient, InvalidRequest


async def test_rate_ride_through_the_sdk(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    key, reservation_no, _, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    async with AsyncTransfersClient(service.url, key) as api:
        booking = await api.get_booking(reservation_no)
        assert booking.ride is not None and booking.ride.rating_url is not None
        assert booking.ride.rating_url.endswith("/r/" + rating_token(reservation_no))
        with pytest.raises(InvalidRequest) as bad:
            await api.rate_ride(reservation_no, 6)
        assert bad.value.code == "INVALID_RATING"
        rating = await api.rate_ride(reservation_no, 5, "Spotless car")
        assert (rating.reservation_no, rating.stars, rating.comment) == (reservation_no, 5, "Spotless car")
        with pytest.raises(InvalidRequest) as again:
            await api.rate_ride(reservation_no, 4)
        assert again.value.code == "RATING_EXISTS"
