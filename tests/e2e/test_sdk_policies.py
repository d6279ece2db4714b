"""The SDK's docs/rules/cancellation.md surface against the real service over HTTP: typed cancellation policies
on vehicles and bookings, the quote, amendments (pending, applied, 409 while pending, refused
fields) and the cancellation as settled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.fake_partner import default_vehicles
from tests.servers import LiveServer
from transfers_sdk import (
    Airport,
    AmendmentInProgress,
    AsyncTransfersClient,
    CancellationPolicy,
    InvalidRequest,
    Point,
    PolicyTier,
    ValidationFailed,
)

LUXURY = [
    {"hours_before_pickup": 48, "fee_percent": 0},
    {"hours_before_pickup": 24, "fee_percent": 50},
    {"hours_before_pickup": 0, "fee_percent": 100},
]
PASSENGER = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}


async def test_policies_quote_amend_and_cancel_typed(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    vehicles = default_vehicles("56.05")
    vehicles[0]["cancellation_policy"] = LUXURY
    await make_partner(airports=("OPO",), vehicles=vehicles)
    _, key = await make_client()
    pickup = (datetime.now(UTC) + timedelta(days=6)).replace(hour=10, minute=0, second=0, microsecond=0)
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=pickup.strftime("%Y-%m-%d %H:%M"),
            pickup=Airport("OPO"),
            dropoff=Point(41.1496, -8.6109, "Ribeira, Porto"),
            adult=2,
        )
        policy = found.vehicles[0].cancellation_policy
        assert isinstance(policy, CancellationPolicy)
        assert policy.tiers == (PolicyTier(48, Decimal(0)), PolicyTier(24, Decimal(50)), PolicyTier(0, Decimal(100)))
        assert policy.free_until is not None and policy.free_until.utcoffset() is not None
        booking = await api.create_booking(
            found.search_id,
            found.vehicles[0].vehicle_id,
            passenger=PASSENGER,
            travel_details={"flight_number": "TP123"},
        )
        assert booking.cancellation_policy == policy and booking.cancellation is None and booking.amendment is None
        quote = await api.cancellation_quote(booking.reservation_no)
        assert (quote.cancelable, quote.fee, quote.refund, quote.currency) == (
            True,
            Decimal("0.00"),
            Decimal("56.05"),
            "EUR",
        )
        assert quote.valid_until == policy.free_until
        amended = await api.amend_booking(
            booking.reservation_no, passenger={"surname": "Byron"}, travel_details={"flight_number": "TP124"}
        )
        assert amended.amendment is not None and amended.amendment.status == "PENDING"
        assert amended.amendment.changes == {
            "passenger": {"surname": "Byron"},
            "travel_details": {"flight_number": "TP124"},
        }
        with pytest.raises(AmendmentInProgress) as busy:
            await api.amend_booking(booking.reservation_no, passenger={"name": "Augusta"})
        assert busy.value.http_status == 409 and busy.value.code == "AMENDMENT_IN_PROGRESS"
        with pytest.raises(ValidationFailed) as bad:
            await api.amend_booking(booking.reservation_no, passenger={"phone": "123"})
        assert bad.value.code == 1009
        dispatcher = service.app.state.services.dispatcher
        for _ in range(10):
            current = await api.get_booking(booking.reservation_no)
            if current.amendment is not None and current.amendment.status != "PENDING":
                break
            await dispatcher.run_once(limit=200)
        assert current.amendment is not None and current.amendment.status == "APPLIED"
        assert current.passenger.surname == "Byron" and current.flight_number == "TP124"
        await api.cancel_booking(booking.reservation_no, 1)
        cancelled = await api.get_booking(booking.reservation_no)
        assert cancelled.cancellation is not None
        assert (cancelled.cancellation.fee, cancelled.cancellation.refund, cancelled.cancellation.by) == (
            Decimal("0.00"),
            Decimal("56.05"),
            "client",
        )
        with pytest.raises(InvalidRequest) as refused:
            await api.amend_booking(booking.reservation_no, passenger={"name": "Late"})
        assert refused.value.code == "AMENDMENT_NOT_ALLOWED"
        gone = await api.cancellation_quote(booking.reservation_no)
        assert (gone.cancelable, gone.fee, gone.refund, gone.valid_until) == (False, None, None, None)
