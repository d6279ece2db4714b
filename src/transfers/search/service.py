"""The search use case: validate, ask partners (outside any transaction), price, store, answer."""

from __future__ import annotations

import asyncio
import secrets
from datetime import datetime, timedelta
from typing import Any

from transfers.cancellation.views import policy_view
from transfers.clients.models import ClientPrincipal
from transfers.hosted.pricing import Trip
from transfers.hosted.search import ask_hosted
from transfers.partners.wire import search_request
from transfers.search import repository as repo
from transfers.search.airports import great_circle_km
from transfers.search.fanout import ask_partners
from transfers.search.offers import Offer, build_offers
from transfers.search.rules import SearchLimits, SearchQuery, parse_search
from transfers.services import Services


def limits(svc: Services) -> SearchLimits:
    s = svc.settings
    return SearchLimits(timedelta(seconds=s.min_lead_time_seconds), timedelta(days=s.max_days_ahead), s.max_travelers)


def new_search_id() -> str:
    return "s_" + secrets.token_urlsafe(24)


async def search(svc: Services, client: ClientPrincipal, body: dict[str, Any]) -> dict[str, Any]:
    now = svc.clock.now()
    query = parse_search(body, now, limits(svc))
    directory = await svc.partners.snapshot()
    airport = query.airport
    own_distance = round(great_circle_km(airport.lat, airport.lng, query.point.lat, query.point.lng))
    server_answers, hosted_answers = await asyncio.gather(
        ask_partners(
            svc.partner_client,
            directory.serving(airport.iata),
            partner_payload(query),
            timeout=svc.settings.partner_timeout_seconds,
            vehicle_types=directory.vehicle_types,
            max_vehicles=svc.settings.partner_max_vehicles,
            health=svc.health,
            now=now,
        ),
        # issue 16: hosted partners answer in-process from their rate cards, priced on the service's
        # own distance figure (great-circle), under the same deadline.
        ask_hosted(
            svc.db,
            directory.hosted_serving(airport.iata),
            Trip(airport.iata, airport.tz, query.pickup_at, own_distance, now),
            timeout=svc.settings.partner_timeout_seconds,
            vehicle_types=directory.vehicle_types,
        ),
    )
    answers = server_answers + hosted_answers
    quotes = [(answer.partner, vehicle) for answer in answers for vehicle in answer.vehicles]
    offers = build_offers(
        quotes, party_size=query.party_size, currency=client.currency if client.pays_by_wallet else None
    )
    distance = next((a.distance_km for a in answers if a.distance_km is not None), None)
    if distance is None:
        distance = own_distance
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
            offers=offers,
            now=now,
            expires_at=now + timedelta(seconds=svc.settings.search_ttl_seconds),
        )
    )
    try:
        await asyncio.sleep(0)
        vehicles = _vehicles(answers, offers, query, now)
    finally:
        await store  # its error, if any, is the search's (nothing is answered without the record)
    return {"search_id": search_id, "distance_km": distance, "vehicles": vehicles}


def _vehicles(answers: list[Any], offers: list[Offer], query: SearchQuery, now: datetime) -> list[dict[str, Any]]:
    """The vehicles as the answer shows them; a cancellation policy shared by many offers (a
    partner's default) is rendered once."""
    companies = {answer.partner.partner_id: answer.partner.name for answer in answers}
    views: dict[int, dict[str, Any]] = {}
    vehicles = []
    for o in offers:
        policy = o.cancellation_policy
        view = views.get(id(policy))
        if view is None:
            view = views[id(policy)] = policy_view(policy, pickup_at=query.pickup_at, now=now, iata=query.airport.iata)
        vehicles.append({**o.public(companies[o.partner_id]), "cancellation_policy": view})
    return vehicles


def partner_payload(query: SearchQuery) -> dict[str, Any]:
    return search_request(
        pickup=query.location(pickup=True),
        dropoff=query.location(pickup=False),
        date=query.pickup_at.isoformat(),
        adult=query.adult,
        children=query.children,
        infant=query.infant,
    )
