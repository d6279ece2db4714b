"""The work after a search's answers are in gives what the plain code gives: offers are plain slotted rows
(``rows.row_type``) equal however they are built, the answer's prices as floats (no ``dumps`` callback),
the stored prices and the SQLite parameters processed once per value object."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from tests.unit.test_typed_rows import OFFER
from transfers.api.responses import dumps
from transfers.cancellation.policy import FREE_UNTIL_PICKUP, parse_spec
from transfers.db.engine import _json_dumps
from transfers.partners.models import PartnerRecord
from transfers.partners.wire import WireSearchAnswer, WireVehicle
from transfers.search import repository
from transfers.search.offers import OFFER_FIELDS, Offer, OfferedExtra, build_offers
from transfers.search.rules import SearchLimits, parse_search

EXTRA = OfferedExtra(3, "seat", "Child seat", "PER_ITEM", Decimal("4.00"), Decimal("4.40"))


def _values(offer: Offer) -> list[Any]:
    return [getattr(offer, name) for name in OFFER_FIELDS]


def test_an_offer_is_a_plain_slotted_row_equal_however_it_is_built() -> None:
    """Positionally (as ``build_offers`` and ``from_row`` build it) or by name: the same fields, equal,
    printed alike; slotted (no ``__dict__``), so a misspelt field cannot be added by accident."""
    made = Offer(*_values(OFFER))
    assert type(made) is Offer and made == OFFER and repr(made) == repr(OFFER)
    assert made == Offer(**dict(zip(OFFER_FIELDS, _values(OFFER), strict=True)))
    assert dataclasses.replace(made, vehicle_no=9) == dataclasses.replace(OFFER, vehicle_no=9) != OFFER
    assert not hasattr(made, "__dict__") and not hasattr(EXTRA, "__dict__")
    with pytest.raises(AttributeError):
        made.sell_pirce = Decimal(0)  # type: ignore[attr-defined]
    extra = OfferedExtra(*(getattr(EXTRA, f.name) for f in dataclasses.fields(OfferedExtra)))
    assert type(extra) is OfferedExtra and extra == EXTRA
    with pytest.raises(TypeError):
        Offer(*_values(OFFER)[:5])  # the fields without defaults are required


def test_offers_read_back_are_offers() -> None:
    stored = OFFER.stored()
    back = Offer.from_row(stored)
    assert type(back) is Offer and back == OFFER
    assert all(type(e) is OfferedExtra for e in back.extras)


PRICES = ["45.10", "45.1", "45.00", "45", "0.01", "0.10", "19.99", "0.30", "999999.99", "12345678.91", "0.00", "-0.00"]


def test_the_answer_s_prices_as_floats_are_the_same_bytes() -> None:
    """Through a search's shared memo, equal prices of other exponents and both zeros included."""
    floats: dict[Decimal, float] = {}
    view: dict[str, Any] = {"tiers": [], "free_until": None}
    for net in PRICES * 2:  # the second time from the memo
        price = Decimal(net)
        offer = dataclasses.replace(OFFER, sell_price=price, extras=(dataclasses.replace(EXTRA, price=-price),))
        old = offer.public("Acme Cars", view)  # Decimals: rendered by dumps' default
        new = offer.public("Acme Cars", view, floats)
        assert type(new["price"]) is float and type(new["extra_services"][0]["price"]) is float
        assert dumps(new) == dumps(old), net
    assert dumps(OFFER.public("A", None, {})) == dumps(OFFER.public("A"))
    assert b'"price":45.1,' in dumps(dataclasses.replace(OFFER, sell_price=Decimal("45.10")).public("A", None, {}))
    assert b'"price":45.0,' in dumps(dataclasses.replace(OFFER, sell_price=Decimal("45.00")).public("A", None, {}))


def test_the_answer_s_counts_are_text_past_the_remembered_ones() -> None:
    for n in (0, 1, 7, 100, 1023, 1024, 5000):
        public = dataclasses.replace(OFFER, vehicle_no=n, max_passengers=n, suitcases=n, small_bags=n).public("A")
        assert [public[k] for k in ("vehicle_id", "max_passengers", "suitcases", "small_bags")] == [str(n)] * 4


def _offers() -> list[Offer]:
    """Offers sharing price objects and a policy, as a search's do, and some that do not."""
    shared, policy = Decimal("40.00"), parse_spec("24:0,0:100")
    offers = []
    for no, net in enumerate(["40.00", "40.0", "-0.00", "0.00", "12.3", "70.00", "40.00"], start=1):
        price = shared if no % 2 else Decimal(net)
        offers.append(
            dataclasses.replace(
                OFFER,
                vehicle_no=no,
                net_price=Decimal(net),
                sell_price=price,
                cancellation_policy=policy if no < 5 else FREE_UNTIL_PICKUP,
                # each row's own extras (their ids differ): never taken for another row's
                extras=tuple(dataclasses.replace(EXTRA, id=no * 10 + k) for k in range(no % 3)),
            )
        )
    return offers


class _Captured:
    """A Database stand-in that keeps what the store would send (both paths), sends nothing."""

    def __init__(self, sqlite: bool) -> None:
        self.is_sqlite = sqlite
        self.engine = create_async_engine("sqlite+aiosqlite://", json_serializer=_json_dumps).sync_engine
        self.params: dict[str, Any] = {}
        self.rows: list[list[Any]] = []

    async def write_one_unflushed(self, statement: Any, **params: Any) -> None:
        self.params = params

    async def sqlite_write(self, work: Any) -> None:
        sent = self

        class Connection:
            lastrowid = 7

            def execute(self, sql: str, args: list[Any]) -> Connection:
                return self

            def executemany(self, sql: str, rows: list[list[Any]]) -> None:
                sent.rows = rows

        work(Connection())


async def _store(db: _Captured, offers: list[Offer]) -> None:
    now = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
    body = {
        "pickup_datetime": "2026-11-29T10:00",
        "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
        "dropoff_location": {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square"},
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }
    query = parse_search(body, now, SearchLimits(timedelta(0), timedelta(days=365), 20))
    await repository.insert_search(
        db,  # type: ignore[arg-type]
        search_id="s_x",
        client_id=1,
        request=body,
        query=query,
        distance_km=25,
        offers=offers,
        now=now,
        expires_at=now,
    )


async def test_postgresql_gets_each_price_as_its_exact_text() -> None:
    offers = _offers()
    db = _Captured(sqlite=False)
    await _store(db, offers)
    sent = db.params["offers"]
    assert [(v["net_price"], v["sell_price"]) for v in sent] == [(str(o.net_price), str(o.sell_price)) for o in offers]
    assert ("-0.00", "40.00") in [(v["net_price"], v["sell_price"]) for v in sent]
    assert [{**v, "net_price": o.net_price, "sell_price": o.sell_price} for v, o in zip(sent, offers, strict=True)] == [
        o.stored() for o in offers
    ]
    # the same keys in the same order as stored(), the extras' too (prices shared between extras by identity)
    assert [list(v) for v in sent] == [list(o.stored()) for o in offers]
    assert [[list(e) for e in v["extras"]] for v in sent] == [[list(e) for e in o.stored()["extras"]] for o in offers]
    assert sum(len(v["extras"]) for v in sent) > 2


async def test_sqlite_gets_the_engine_s_parameters_for_every_offer() -> None:
    offers = _offers()
    db = _Captured(sqlite=True)
    await _store(db, offers)
    _, insert_vehicle = repository._sqlite_inserts(db.engine.dialect)
    expected = [insert_vehicle.arguments({"search_pk": 7, **o.stored()}) for o in offers]
    assert db.rows == expected
    types = [[type(v) for v in row] for row in expected]
    assert len(db.rows) == len(offers) and [[type(v) for v in row] for row in db.rows] == types


def test_wire_models_keep_their_fields_in_their_dict() -> None:
    """``build_offers`` reads a partner's vehicle from its ``__dict__`` (pydantic's own storage of a
    model's fields): validated and ``model_construct``ed (hosted partners) alike, every field is there."""
    answer = WireSearchAnswer.model_validate(
        {
            "vehicles": [
                {
                    "id": 7,
                    "make": "A",
                    "model": "B",
                    "type": "SEDAN",
                    "price": "10.50",
                    "currency": "EUR",
                    "capacity": {"passengers": 3, "suitcases": 1, "small_bags": 0},
                    "extras": [{"id": "s", "name": "Seat", "price": 5, "pricing_type": "PER_ITEM"}],
                    "cancellation_policy": [{"hours_before_pickup": 0, "fee_percent": 0}],
                }
            ]
        }
    )
    built = WireVehicle.model_construct(
        id="v",
        make="A",
        model="B",
        type="SEDAN",
        price=Decimal("1.00"),
        currency="EUR",
        capacity=answer.vehicles[0].capacity,
    )
    for model in (answer.vehicles[0], answer.vehicles[0].capacity, answer.vehicles[0].extras[0], built):
        assert model.__dict__ == {name: getattr(model, name) for name in type(model).model_fields}


def test_offers_are_sorted_by_price_partner_and_vehicle_then_as_given() -> None:
    a = PartnerRecord(1, "A", "http://a", ("LHR",), Decimal(0), "active", False)
    b = PartnerRecord(
        2, "B", "http://b", ("LHR",), Decimal(10), "active", False, cancellation_policy=parse_spec("0:50")
    )

    def vehicle(vid: str, price: str, passengers: int = 3, currency: str = "EUR", **more: Any) -> WireVehicle:
        return WireVehicle.model_validate(
            {
                "id": vid,
                "make": "M",
                "model": "N",
                "type": "SEDAN",
                "price": price,
                "currency": currency,
                "capacity": {"passengers": passengers, "suitcases": 1, "small_bags": 1},
                **more,
            }
        )

    own = [{"hours_before_pickup": 0, "fee_percent": 100}]
    quotes = [
        (b, vehicle("x", "10.00")),  # 11.00 with B's markup
        (a, vehicle("y", "11.00", extras=[{"id": "s", "name": "Seat", "price": "2.00", "pricing_type": "PER_ITEM"}])),
        (a, vehicle("x", "11.00", cancellation_policy=own)),
        (a, vehicle("x", "11.00")),  # the same as the one before: kept after it
        (a, vehicle("z", "5.00", passengers=1)),  # too small
        (a, vehicle("w", "5.00", currency="GBP")),  # another currency
        (b, vehicle("e", "1.00", extras=[{"id": "t", "name": "Tea", "price": "1.00", "pricing_type": "PER_BOOKING"}])),
    ]
    offers = build_offers(quotes, party_size=2, currency="EUR")
    assert [(o.partner_id, o.partner_vehicle_id, str(o.sell_price)) for o in offers] == [
        (2, "e", "1.10"),
        (1, "x", "11.00"),
        (1, "x", "11.00"),
        (1, "y", "11.00"),
        (2, "x", "11.00"),
    ]
    assert [o.vehicle_no for o in offers] == [1, 2, 3, 4, 5]
    assert [o.cancellation_policy for o in offers] == [
        parse_spec("0:50"),
        parse_spec("0:100"),
        FREE_UNTIL_PICKUP,
        FREE_UNTIL_PICKUP,
        parse_spec("0:50"),
    ]
    assert offers[0].extras == (OfferedExtra(1, "t", "Tea", "PER_BOOKING", Decimal("1.00"), Decimal("1.10")),)
    assert offers[3].extras == (OfferedExtra(2, "s", "Seat", "PER_ITEM", Decimal("2.00"), Decimal("2.00")),)
    assert [type(o) for o in offers] == [Offer] * 5
    back = build_offers(quotes[:2], party_size=2, currency=None, after=offers)
    assert [(o.vehicle_no, o.leg, [e.id for e in o.extras]) for o in back] == [(6, 2, [3]), (7, 2, [])]
    assert build_offers(quotes[4:6], party_size=1, currency=None)[0].partner_vehicle_id == "w"
