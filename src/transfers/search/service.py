"""The search use case: validate, ask partners (outside any transaction), price, store, answer."""

from __future__ import annotations

import asyncio
from binascii import b2a_base64
from collections.abc import Awaitable
from datetime import datetime, timedelta
from decimal import Decimal
from os import urandom
from typing import Any

from transfers.cancellation.views import policy_view
from transfers.clients.models import ClientPrincipal
from transfers.errors import Code, Invalid
from transfers.fx.rates import RateTable
from transfers.fx.service import rate_table
from transfers.partners.wire import search_request
from transfers.ratecards.pricing import Trip
from transfers.reference.airports import great_circle_km
from transfers.search import ranking
from transfers.search import repository as repo
from transfers.search.fanout import ask_partners
from transfers.search.hosted import ask_hosted
from transfers.search.offers import Offer, build_offers
from transfers.search.rules import SearchLimits, SearchQuery, parse_search, requested_currency, requested_sort
from transfers.services import Services
from transfers.wallet.repository import wallets_of_client


def limits(svc: Services) -> SearchLimits:
    s = svc.settings
    return SearchLimits(timedelta(seconds=s.min_lead_time_seconds), timedelta(days=s.max_days_ahead), s.max_travelers)


_URLSAFE = bytes.maketrans(b"+/", b"-_")  # base64.urlsafe_b64encode's table


def new_search_id() -> str:
    """``"s_" + secrets.token_urlsafe(24)`` without its four Python calls: the same 24 bytes of
    ``os.urandom``, the same unpadded URL-safe base64 (32 characters), one per search."""
    return "s_" + b2a_base64(urandom(24), newline=False).translate(_URLSAFE).decode("ascii")


async def search(svc: Services, client: ClientPrincipal, body: dict[str, Any]) -> dict[str, Any]:
    now = svc.clock.now()
    query = parse_search(body, now, limits(svc))
    currency = await search_currency(svc, client, body.get("currency"))
    sort = requested_sort(body.get("sort"))
    directory = await svc.partners.snapshot()
    airport = query.airport
    own_distance = round(great_circle_km(airport.lat, airport.lng, query.point.lat, query.point.lng))
    serving, hosted = directory.serving(airport.iata), directory.hosted_serving(airport.iata)
    timeout = svc.settings.partner_timeout_seconds

    def ask(payload: dict[str, Any], pickup_at: datetime) -> Awaitable[list[Any]]:
        """One leg's answers: the server partners', then the hosted ones'. Without hosted partners
        (the usual case) the fan-out runs in the search's own task, not in one more."""
        partners = ask_partners(
            svc.partner_client,
            serving,
            payload,
            timeout=timeout,
            vehicle_types=directory.vehicle_types,
            max_vehicles=svc.settings.partner_max_vehicles,
            health=svc.health,
            now=now,
        )
        if not hosted:
            return partners
        # hosted partners answer in-process from their rate cards, priced on the service's
        # own distance figure (great-circle), under the same deadline.
        return _joined(
            partners,
            ask_hosted(
                svc.db,
                hosted,
                Trip(airport.iata, airport.tz, pickup_at, own_distance, now),
                timeout=timeout,
                vehicle_types=directory.vehicle_types,
            ),
        )

    back_answers: list[Any] = []
    if query.return_at is None:
        answers = await ask(partner_payload(query), query.pickup_at)
    else:
        # docs/rules/return-trips.md#search: the way back (the reverse route at the return time) is asked
        # in the same fan-out, all four at once under the one deadline; hosted partners price it on its day.
        answers, back_answers = await asyncio.gather(
            ask(partner_payload(query), query.pickup_at), ask(partner_payload(query, back=True), query.return_at)
        )
    quotes = [(answer.partner, vehicle) for answer in answers for vehicle in answer.vehicles]
    back_quotes = [(answer.partner, vehicle) for answer in back_answers for vehicle in answer.vehicles]
    rates = await _rates(svc, currency, quotes, back_quotes)
    offers = build_offers(quotes, party_size=query.party_size, currency=currency, rates=rates)
    distance = next((a.distance_km for a in answers if a.distance_km is not None), None)
    if distance is None:
        distance = own_distance
    back_offers: list[Offer] = []
    if query.return_at is not None:
        back_offers = build_offers(
            back_quotes, party_size=query.party_size, currency=currency, rates=rates, after=offers
        )
    # docs/rules/quality.md#ranking: one step once the offers are built, before they are stored
    qualities = await ranking.current(svc.db)
    offers = ranking.rank(offers, qualities, sort)
    back_offers = ranking.rank(back_offers, qualities, sort)
    search_id = new_search_id()
    # The stored search must be committed before the answer leaves (a booking may follow at once,
    # on any process), so the store stays on the answer's path; but the answer's body is built
    # while the database works: the store runs to its first wait, then the vehicles are rendered.
    store = asyncio.ensure_future(
        repo.insert_search(
            svc.db,
            search_id=search_id,
            client_id=client.client_id,
            request=body,
            query=query,
            distance_km=distance,
            offers=offers + back_offers if back_offers else offers,
            now=now,
            expires_at=now + timedelta(seconds=svc.settings.search_ttl_seconds),
        )
    )
    return_vehicles: list[dict[str, Any]] = []
    try:
        await asyncio.sleep(0)
        vehicles = ranking.label(_vehicles(answers, offers, query, query.pickup_at, now), offers, qualities)
        if query.return_at is not None:
            return_vehicles = ranking.label(
                _vehicles(back_answers, back_offers, query, query.return_at, now), back_offers, qualities
            )
    finally:
        await store  # its error, if any, is the search's (nothing is answered without the record)
    if query.return_at is None:  # the one-way answer, byte for byte as before return trips
        return {"search_id": search_id, "distance_km": distance, "vehicles": vehicles}
    return {"search_id": search_id, "distance_km": distance, "vehicles": vehicles, "return_vehicles": return_vehicles}


async def search_currency(svc: Services, client: ClientPrincipal, value: Any) -> str | None:
    """The currency the search prices in (docs/rules/fx.md#search). A wallet client: the one sent, which
    must be a currency it holds a wallet in, else its default wallet's; a reverse_api client: the one sent,
    any the service accepts, else None (every quote in its own currency). 1325 otherwise. The wallets are
    read only when a wallet client names another currency than its default wallet's that this process has
    not yet seen it hold (``Services.wallet_currencies``)."""
    requested = requested_currency(value, svc.settings.enabled_currencies)
    if not client.pays_by_wallet:
        return requested
    if requested is None or requested == client.currency:
        return client.currency
    if requested in svc.wallet_currencies.get(client.client_id, ()):
        return requested  # seen before: wallets are never removed, so no read on the search's path
    async with svc.db.read() as conn:
        held = frozenset(w.currency for w in await wallets_of_client(conn, client.client_id))
    svc.wallet_currencies[client.client_id] = held
    if requested not in held:
        raise Invalid(Code.SEARCH_CURRENCY_INVALID)
    return requested


async def _rates(svc: Services, currency: str | None, *legs: list[tuple[Any, Any]]) -> RateTable | None:
    """The rate table when some quote is in another currency than the search's, else None (no read)."""
    if currency is None or all(v.__dict__["currency"] == currency for quotes in legs for _, v in quotes):
        return None
    if svc.fx_rates is not None:
        return await svc.fx_rates.current()
    return await rate_table(svc.db, svc.settings, svc.clock)


async def _joined(*calls: Awaitable[list[Any]]) -> list[Any]:
    """The answers of calls made at once, in the calls' order."""
    return [answer for answers in await asyncio.gather(*calls) for answer in answers]


def _vehicles(
    answers: list[Any], offers: list[Offer], query: SearchQuery, pickup_at: datetime, now: datetime
) -> list[dict[str, Any]]:
    """The vehicles as the answer shows them; a cancellation policy shared by many offers (a
    partner's default) is rendered once."""
    companies = {answer.partner.partner_id: answer.partner.name for answer in answers}
    views: dict[int, dict[str, Any]] = {}
    floats: dict[Decimal, float] = {}
    vehicles = []
    for o in offers:
        policy = o.cancellation_policy
        view = views.get(id(policy))
        if view is None:
            view = views[id(policy)] = policy_view(policy, pickup_at=pickup_at, now=now, iata=query.airport.iata)
        vehicles.append(o.public(companies[o.partner_id], view, floats))
    return vehicles


def partner_payload(query: SearchQuery, *, back: bool = False) -> dict[str, Any]:
    """The partner's search request; ``back``: for the way back (docs/rules/return-trips.md#search), the
    route reversed at the return time."""
    when = query.return_at if back and query.return_at is not None else query.pickup_at
    return search_request(
        pickup=query.location(pickup=not back),
        dropoff=query.location(pickup=back),
        date=when.isoformat(),
        adult=query.adult,
        children=query.children,
        infant=query.infant,
    )
