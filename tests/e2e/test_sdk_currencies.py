"""The SDK searching in a currency (docs/rules/fx.md#search): ``currency=`` on search, ``Vehicle.fx`` and the
booking's ``Price.fx``, against the served service and a partner quoting in EUR (sandbox rates)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import future_local
from tests.servers import LiveServer
from transfers_sdk import Airport, AsyncTransfersClient, Fx, Point, ValidationFailed

BRISTOL = Point(51.4545, -2.5879, "Bristol centre")


async def test_a_gbp_search_through_the_sdk_converts_and_the_booking_carries_the_rate(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(currency="GBP", balance="200.00")
    await make_partner(airports=("BRS",), markup="10", name="Euro Cars SDK")
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=future_local(), pickup=Airport("BRS"), dropoff=BRISTOL, adult=2, currency="GBP"
        )
        car = next(v for v in found.vehicles if v.company == "Euro Cars SDK")
        # 40.00 EUR x 0.8563 = 34.252 -> 34.25 GBP, x 1.10 = 37.675 -> 37.68
        assert (car.price, car.currency) == (Decimal("37.68"), "GBP")
        assert isinstance(car.fx, Fx) and (car.fx.from_currency, car.fx.to_currency) == ("EUR", "GBP")
        assert car.fx.rate == Decimal("0.8563") and car.fx.source == "sandbox" and isinstance(car.fx.as_of, date)
        booking = await api.create_booking(
            found.search_id,
            car.vehicle_id,
            {"name": "Ada", "surname": "Lovelace", "email": "ada@example.com", "phone": "+447911123456"},
            {"flight_number": "BA117"},
        )
        assert (booking.price.total, booking.price.currency, booking.price.fx) == (Decimal("37.68"), "GBP", car.fx)
        with pytest.raises(ValidationFailed) as refused:  # no EUR wallet
            await api.search(
                pickup_datetime=future_local(), pickup=Airport("BRS"), dropoff=BRISTOL, adult=2, currency="EUR"
            )
        assert refused.value.code == 1325


@pytest.mark.parametrize(("currency", "quoted"), [("KWD", "20.465"), ("JPY", "10010")])
async def test_amounts_reach_the_sdk_with_their_currencys_decimals(
    service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory, currency: str, quoted: str
) -> None:
    """A KWD quote of 20.465 and a JPY one of 10010 (the partner wire carries three and none) are the SDK's
    exact Decimals on the vehicle, the booking's price and the wallets, never rounded to cents."""
    from tests.api.test_search_currencies import vehicle

    _, key = await make_client(currency=currency, balance=quoted)
    await make_partner(airports=("BRS",), name=f"{currency} Cars SDK", vehicles=[vehicle("c-1", quoted, currency)])
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(pickup_datetime=future_local(), pickup=Airport("BRS"), dropoff=BRISTOL, adult=2)
        car = next(v for v in found.vehicles if v.company == f"{currency} Cars SDK")
        assert (car.price, car.currency, car.fx) == (Decimal(quoted), currency, None)
        booking = await api.create_booking(
            found.search_id,
            car.vehicle_id,
            {"name": "Ada", "surname": "Lovelace", "email": "ada@example.com", "phone": "+447911123456"},
            {"flight_number": "BA117"},
        )
        assert (booking.price.total, booking.price.currency) == (Decimal(quoted), currency)
        (wallet,) = await api.list_wallets()
        assert (wallet.currency, wallet.balance, wallet.default) == (currency, Decimal(0), True)
        entries = await api.list_wallet_entries(currency=currency)
        assert [(e.kind, e.amount) for e in entries.entries] == [
            ("debit", -Decimal(quoted)),
            ("top_up", Decimal(quoted)),
        ]
