"""The search use case: validate, ask partners (outside any transaction), price, store, answer."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from transfers.clients.models import ClientPrincipal
from transfers.partners.wire import search_request
from transfers.search import repository as repo
from transfers.search.airports import great_circle_km
from transfers.search.fanout import ask_partners
from transfers.search.offers import build_offers
from transfers.search.rules import SearchLimits, SearchQuery, parse_search
from transfers.services import Services


def limits(svc: Services) -> SearchLimits:
    s = svc.settings
    return SearchLimits(timedelta(seconds=s.min_lead_time_seconds), timedelta(days=s.max_days_ahead),
                        s.max_travelers)


def new_search_id() -> str:
    return "s_" + secrets.token_urlsafe(24)


async def search(svc: Services, client: ClientPrincipal, body: dict[str, Any]) -> dict[str, Any]:
    now = svc.clock.now()
    query = parse_search(body, now, limits(svc))
    directory = await svc.partners.snapshot()
    answers = await ask_partners(
        svc.partner_client, directory.serving(query.airport.iata), partner_payload(query),
        timeout=svc.settings.partner_timeout_seconds, vehicle_types=directory.vehicle_types,
        max_vehicles=svc.settings.partner_max_vehicles, health=svc.health, now=now,
    )
    quotes = [(answer.partner, vehicle) for answer in answers for vehicle in answer.vehicles]
    offers = build_offers(quotes, party_size=query.party_size,
                          currency=client.currency if client.pays_by_wallet else None)
    distance = next((a.distance_km for a in answers if a.distance_km is not None), None)
    if distance is None:
        distance = round(great_circle_km(query.airport.lat, query.airport.lng, query.point.lat, query.point.lng))
    search_id = new_search_id()
    await repo.insert_search(
        svc.db, search_id=search_id, client_id=client.client_id, request=body, query=query,
        distance_km=distance, offers=offers, now=now,
        expires_at=now + timedelta(seconds=svc.settings.search_ttl_seconds),
    )
    companies = {answer.partner.partner_id: answer.partner.name for answer in answers}
    return {"search_id": search_id, "distance_km": distance,
            "vehicles": [o.public(companies[o.partner_id]) for o in offers]}


def partner_payload(query: SearchQuery) -> dict[str, Any]:
    return search_request(
        pickup=query.location(pickup=True), dropoff=query.location(pickup=False),
        date=query.pickup_at.isoformat(), adult=query.adult, children=query.children, infant=query.infant,
    )
