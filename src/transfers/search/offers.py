"""Turning partner quotes into the offers a client sees (docs/rules/search.md), and the one ``Offer`` type.

Sell price = net price + the partner's markup (vehicle and extras alike), rounded half-up to the
currency's decimals; a quote in another currency than the search's is first converted line by line
(docs/rules/fx.md#search). Offers that cannot seat the whole party, or whose rate is missing or stale,
are left out. What remains is sorted by price and numbered: ``vehicle_no`` 1..n and
extra-service ids unique within the search.

``Offer`` is a ``search_vehicles`` row: the search stores it (``search/repository.py``) and the
booking create reads the same row type back (``bookings/repository.find_offer``), so what a
client was offered and what it is charged cannot drift apart through two shapes of one row.
``SearchedTrip`` is the part of a ``searches`` row the booking copies. tests/unit/test_typed_rows.py
pins both to the table columns. Pure: no SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from transfers import money
from transfers.cancellation.policy import FREE_UNTIL_PICKUP, Policy, from_json
from transfers.fx.rates import RateTable
from transfers.money import MoneyError
from transfers.partners.models import PartnerRecord, sell_price
from transfers.partners.wire import WireVehicle
from transfers.rows import row_type

# The answer shows counts and vehicle numbers as text: the small ones made once (a str(int) costs ~900
# instructions, four per vehicle; capacities are at most 100 on the wire, vehicle numbers rarely past 1000).
_TEXTS = {n: str(n) for n in range(1024)}


@row_type
class OfferedExtra:
    """One extra service of an offer; stored as an item of ``search_vehicles.extras`` (money as text)."""

    id: int  # unique within the search: what the client sends back in ``extra_services``
    partner_extra_id: str
    name: str
    pricing_type: str  # PER_ITEM | PER_BOOKING
    net_price: Decimal  # in the offer's currency (converted when the offer is: docs/rules/fx.md#search)
    price: Decimal
    partner_net_price: Decimal | None = None  # the partner's own unit price when converted, else None

    def stored(self, texts: dict[int, str] | None = None) -> dict[str, Any]:
        """The item as ``search_vehicles.extras`` keeps it: its prices as their exact ``str`` (read back by
        ``Decimal``, never shown: what people and partners read is written by ``money.text``). ``texts``:
        each price's ``str`` remembered by the price object's identity (the objects alive as long as
        ``texts``): a search's store shares a few prices among many extras, and a ``str`` of a Decimal
        costs ~1-2 k instructions."""
        if texts is None:
            net_price, price = str(self.net_price), str(self.price)
        else:
            net, sell = self.net_price, self.price
            net_price = texts.get(id(net)) or texts.setdefault(id(net), str(net))
            price = texts.get(id(sell)) or texts.setdefault(id(sell), str(sell))
        item = {
            "id": self.id,
            "partner_extra_id": self.partner_extra_id,
            "name": self.name,
            "pricing_type": self.pricing_type,
            "net_price": net_price,
            "price": price,
        }
        own = self.partner_net_price
        if own is not None:
            item["partner_net_price"] = (
                str(own) if texts is None else texts.get(id(own)) or texts.setdefault(id(own), str(own))
            )
        return item

    @classmethod
    def from_stored(cls, item: Mapping[str, Any]) -> OfferedExtra:
        return cls(
            int(item["id"]),
            item["partner_extra_id"],
            item["name"],
            item["pricing_type"],
            Decimal(item["net_price"]),
            Decimal(item["price"]),
            Decimal(own) if (own := item.get("partner_net_price")) is not None else None,
        )


@row_type
class Offer:
    """One vehicle of a search as stored: every field is the ``search_vehicles`` column of that name
    (all but ``id`` and ``search_pk``, which only the database knows)."""

    vehicle_no: int  # 1..n within the search, cheapest first: the client's ``vehicle_id``
    partner_id: int
    partner_vehicle_id: str
    make: str
    model: str
    type: str
    max_passengers: int
    suitcases: int
    small_bags: int
    net_price: Decimal  # what the partner is paid, in ``currency`` (converted when ``fx`` is set)
    sell_price: Decimal  # what the client pays: net price plus the partner's markup
    currency: str  # of ``sell_price`` and ``net_price``: the search's
    extras: tuple[OfferedExtra, ...] = ()
    # docs/rules/cancellation.md: the vehicle's own cancellation policy, else its partner's default, else free until
    # pickup; stored as its JSON tiers
    cancellation_policy: Policy = FREE_UNTIL_PICKUP
    # docs/rules/return-trips.md#search: 1 an offer of ``vehicles``, 2 of ``return_vehicles``
    leg: int = 1
    # docs/rules/fx.md#search: the rate the partner's prices were converted at (``FxRate.as_dict``), and the
    # partner's own currency and net price; all None when the partner quoted in the search's currency
    fx: dict[str, str] | None = None
    partner_currency: str | None = None
    partner_net_price: Decimal | None = None

    def find_extra(self, extra_id: int) -> OfferedExtra | None:
        """The extra the client refers to by its id, or None (a handful per offer: a scan)."""
        for extra in self.extras:
            if extra.id == extra_id:
                return extra
        return None

    def stored(self, policy: list[dict[str, Any]] | None = None, texts: dict[int, str] | None = None) -> dict[str, Any]:
        """The row's column values (``extras`` as its JSON items); ``policy``: the cancellation
        policy's ``public()`` when the caller has it already (a search stores many offers sharing
        their partner's default policy and renders it once); ``texts``: the extras' price texts
        remembered across the offers (``OfferedExtra.stored``)."""
        return {
            "vehicle_no": self.vehicle_no,
            "partner_id": self.partner_id,
            "partner_vehicle_id": self.partner_vehicle_id,
            "make": self.make,
            "model": self.model,
            "type": self.type,
            "max_passengers": self.max_passengers,
            "suitcases": self.suitcases,
            "small_bags": self.small_bags,
            "net_price": self.net_price,
            "sell_price": self.sell_price,
            "currency": self.currency,
            "extras": [e.stored(texts) for e in self.extras],
            "cancellation_policy": self.cancellation_policy.public() if policy is None else policy,
            "leg": self.leg,
            "fx": self.fx,
            "partner_currency": self.partner_currency,
            "partner_net_price": self.partner_net_price,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any], prefix: str = "") -> Offer:
        """From a row read back, its columns named ``prefix + column``: no validation (the service
        wrote it, and the create path reads one per request)."""
        return cls(
            row[prefix + "vehicle_no"],
            row[prefix + "partner_id"],
            row[prefix + "partner_vehicle_id"],
            row[prefix + "make"],
            row[prefix + "model"],
            row[prefix + "type"],
            row[prefix + "max_passengers"],
            row[prefix + "suitcases"],
            row[prefix + "small_bags"],
            row[prefix + "net_price"],
            row[prefix + "sell_price"],
            row[prefix + "currency"],
            tuple(OfferedExtra.from_stored(e) for e in row[prefix + "extras"]),
            _policy(row.get(prefix + "cancellation_policy")),
            row[prefix + "leg"],
            row.get(prefix + "fx"),
            row.get(prefix + "partner_currency"),
            row.get(prefix + "partner_net_price"),
        )

    def public(
        self,
        company: str,
        cancellation_policy: dict[str, Any] | None = None,
        floats: dict[Decimal, float] | None = None,
    ) -> dict[str, Any]:
        """The vehicle as the search answer shows it (docs/rules/search.md#answer); ``company`` is the partner's
        name, ``cancellation_policy`` its policy's view (``cancellation.views.policy_view``), last when given.

        ``floats``: the search's prices as JSON numbers, ``money.number(price)`` remembered per price (a
        conversion costs as much as four lookups, and partners quote the same few); a zero is converted
        each time, as -0.00 and 0.00 are one key. Given, the prices are those floats, so that orjson
        writes them itself rather than calling ``api.responses``' default back once per price (~2 k
        instructions each, 60 to a 10-partner search): the same bytes, as that default is
        ``money.number(price)`` too (45.1, 45.0). Not given: the Decimals. A currency without decimals
        (JPY) is written as a JSON integer (``10010``): a float would write ``10010.0``, a decimal its
        amounts do not have (docs/rules/fx.md#search).
        """
        price: Decimal | float | int = self.sell_price
        extras: list[dict[str, Any]] = []
        if money.places(self.currency) == 0:  # JPY 10010, never 10010.0: no decimals in the number either
            price = int(self.sell_price)
            for e in self.extras:
                extras.append({"id": e.id, "name": e.name, "price": int(e.price), "pricing_type": e.pricing_type})
        elif floats is None:
            for e in self.extras:
                extras.append({"id": e.id, "name": e.name, "price": e.price, "pricing_type": e.pricing_type})
        else:
            price = floats.get(self.sell_price, 0.0)
            if not price:
                price = floats[self.sell_price] = money.number(self.sell_price)
            for e in self.extras:
                shown = floats.get(e.price, 0.0)
                if not shown:
                    shown = floats[e.price] = money.number(e.price)
                extras.append({"id": e.id, "name": e.name, "price": shown, "pricing_type": e.pricing_type})
        public: dict[str, Any] = {
            "vehicle_id": _TEXTS.get(self.vehicle_no) or str(self.vehicle_no),
            "make": self.make,
            "model": self.model,
            "type": self.type,
            "max_passengers": _TEXTS.get(self.max_passengers) or str(self.max_passengers),
            "suitcases": _TEXTS.get(self.suitcases) or str(self.suitcases),
            "small_bags": _TEXTS.get(self.small_bags) or str(self.small_bags),
            "price": price,
            "currency": self.currency,
            "fx": self.fx,
            "company": company,
            "extra_services": extras,
        }
        if cancellation_policy is not None:
            public["cancellation_policy"] = cancellation_policy
        return public


@dataclass(frozen=True, slots=True)
class SearchedTrip:
    """What a stored search says about the trip, as the booking copies it: every field is the
    ``searches`` column of that name (``id`` is the row's key)."""

    id: int
    airport_iata: str
    pickup_at: datetime
    pickup_location: dict[str, Any]
    dropoff_location: dict[str, Any]
    adult: int
    children: int
    infant: int
    distance_km: int | None
    return_pickup_at: datetime | None  # docs/rules/return-trips.md#search: None for a one-way search

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SearchedTrip:
        return cls(
            row["id"],
            row["airport_iata"],
            row["pickup_at"],
            row["pickup_location"],
            row["dropoff_location"],
            row["adult"],
            row["children"],
            row["infant"],
            row["distance_km"],
            row["return_pickup_at"],
        )


OFFER_FIELDS = tuple(f.name for f in fields(Offer))
SEARCHED_TRIP_FIELDS = tuple(f.name for f in fields(SearchedTrip))


def build_offers(
    quotes: list[tuple[PartnerRecord, WireVehicle]],
    *,
    party_size: int,
    currency: str | None,
    rates: RateTable | None = None,
    after: list[Offer] | None = None,
) -> list[Offer]:
    """``currency``: the search's (docs/rules/fx.md#search); a quote in another currency is converted line
    by line with ``rates`` (each net price rounded half-up in ``currency``, then marked up), and left out
    when its rate is missing or stale (``RateTable.usable`` logs it) or no ``rates`` are given. None
    accepts every currency unconverted (a reverse_api client searching without ``currency``).

    ``after``: the way out's offers when these are the way back's (docs/rules/return-trips.md#search):
    they are leg 2 and numbered on from them (vehicle numbers and extra ids), so one search never
    gives two offers, or two extras, the same id."""
    # A wire model keeps its fields in its ``__dict__`` (pydantic): read there, once per vehicle and
    # extra, rather than through pydantic's ``__getattr__`` hook, which makes every ``quote.x`` a slow
    # lookup (~470 instructions against ~190; ~25 reads per vehicle).
    eligible = []
    pairs: dict[str, tuple[Decimal, dict[str, str]] | None] = {}  # quoted currency -> (rate, fx), once each
    for index, (partner, quote) in enumerate(quotes):
        q = quote.__dict__
        if q["capacity"].__dict__["passengers"] < party_size:
            continue
        quoted_in = q["currency"]
        conversion = None
        try:
            if currency is None or quoted_in == currency:
                net = q["price"]
                price = sell_price(net, partner.markup_percent, quoted_in)
            else:
                conversion = pairs.get(quoted_in, _UNSEEN)
                if conversion is _UNSEEN:
                    conversion = pairs[quoted_in] = _pair(rates, quoted_in, currency)
                if conversion is None:  # no usable rate: the offer is left out (logged once by the table)
                    continue
                net = converted(q["price"], quoted_in, conversion[0], currency)
                price = sell_price(net, partner.markup_percent, currency)
        except MoneyError:  # a price with more decimals than its currency has: the vehicle is left out
            continue
        # sorted by price, partner name, vehicle id; the index keeps equal ones in the order given
        eligible.append((price, partner.name, q["id"], index, partner, q, net, conversion))
    eligible.sort()
    offers: list[Offer] = []
    next_extra_id, first_no, leg = 1, 1, 1
    if after is not None:
        next_extra_id = 1 + max((e.id for o in after for e in o.extras), default=0)
        first_no, leg = len(after) + 1, 2
    for number, (price, _, _, _, partner, q, net, conversion) in enumerate(eligible, start=first_no):
        extras = []
        markup, quoted_in = partner.markup_percent, q["currency"]
        for extra in q["extras"]:
            x = extra.__dict__
            own = x["price"]
            try:
                if conversion is None:
                    sell = sell_price(own, markup, quoted_in)
                    extras.append(OfferedExtra(next_extra_id, x["id"], x["name"], x["pricing_type"], own, sell))
                else:
                    unit = converted(own, quoted_in, conversion[0], currency or quoted_in)
                    sell = sell_price(unit, markup, currency or quoted_in)
                    extras.append(OfferedExtra(next_extra_id, x["id"], x["name"], x["pricing_type"], unit, sell, own))
            except MoneyError:  # a price with more decimals than its currency has: the extra is left out
                continue
            next_extra_id += 1
        capacity = q["capacity"].__dict__
        offers.append(
            Offer(
                number,
                partner.partner_id,
                q["id"],
                q["make"],
                q["model"],
                q["type"],
                capacity["passengers"],
                capacity["suitcases"],
                capacity["small_bags"],
                net,
                price,
                quoted_in if conversion is None else currency or quoted_in,
                tuple(extras),
                policy_of(partner, q["cancellation_policy"]),
                leg,
                None if conversion is None else conversion[1],
                None if conversion is None else quoted_in,
                None if conversion is None else q["price"],
            )
        )
    return offers


_UNSEEN: Any = object()


def _pair(rates: RateTable | None, quoted_in: str, currency: str) -> tuple[Decimal, dict[str, str]] | None:
    """The rate from a partner's currency into the search's and its ``fx`` object, or None when there
    is no usable one (``RateTable.usable`` logs ``fx_rate_unavailable``)."""
    fx = rates.usable(quoted_in, currency) if rates is not None else None
    return None if fx is None else (fx.rate, fx.as_dict())


def converted(net: Decimal, quoted_in: str, rate: Decimal, currency: str) -> Decimal:
    """One net line converted: the partner's price (exact in its own currency, else ``MoneyError``) times
    the rate, rounded half-up to ``currency``'s decimals (docs/rules/fx.md#search)."""
    return _remembered_converted(net, quoted_in, rate, currency)


def _converted(net: Decimal, quoted_in: str, rate: Decimal, currency: str) -> Decimal:
    return money.round_half_up(money.exact(net, quoted_in) * rate, currency)


# As ``partners.models.sell_price``: partners quote the same few prices, and a search converts each at one
# rate; the result depends only on the values (rounded), errors are not cached.
_remembered_converted = lru_cache(maxsize=4096)(_converted)


def _policy(stored: Any) -> Policy:
    """A stored policy; NULL (offers stored before policies existed): free until pickup."""
    return FREE_UNTIL_PICKUP if stored is None else from_json(stored)


def policy_of(partner: PartnerRecord, own: Any) -> Policy:
    """docs/rules/cancellation.md: a policy sent with the vehicle (``own``, its wire
    ``cancellation_policy``) wins over the partner's default."""
    if own is not None:
        return from_json(own)
    return partner.cancellation_policy or FREE_UNTIL_PICKUP
