"""Stored searches: the request, every offer and its partner-side facts, for booking to trust.

Statements are built once at import and executed with parameters: building ``insert(t).values(...)``
or ``select(...).where(...)`` per call, and SQLAlchemy deriving its cache key from it, cost more
CPU than executing the statement (bench/README.md, "Profile"). The SQL sent is the same.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import search_vehicles, searches
from transfers.search.offers import Offer
from transfers.search.rules import SearchQuery

_INSERT_SEARCH = insert(searches).returning(searches.c.id)
# executemany: one statement for all of a search's offers.
_INSERT_VEHICLES = insert(search_vehicles)

async def insert_search(conn: AsyncConnection, *, search_id: str, client_id: int, request: dict[str, Any],
                        query: SearchQuery, distance_km: int | None, offers: list[Offer], now: datetime,
                        expires_at: datetime) -> None:
    search_pk = (await conn.execute(_INSERT_SEARCH, {
        "search_id": search_id, "client_id": client_id, "request": request, "airport_iata": query.airport.iata,
        "pickup_at": query.pickup_at, "pickup_location": query.location(pickup=True),
        "dropoff_location": query.location(pickup=False), "adult": query.adult, "children": query.children,
        "infant": query.infant, "distance_km": distance_km, "created_at": now, "expires_at": expires_at,
    })).scalar_one()
    if not offers:
        return
    await conn.execute(_INSERT_VEHICLES, [
        {
            "search_pk": search_pk, "vehicle_no": o.vehicle_no, "partner_id": o.partner.partner_id,
            "partner_vehicle_id": o.quote.id, "make": o.quote.make, "model": o.quote.model, "type": o.quote.type,
            "max_passengers": o.quote.capacity.passengers, "suitcases": o.quote.capacity.suitcases,
            "small_bags": o.quote.capacity.small_bags, "net_price": o.net_price, "sell_price": o.price,
            "currency": o.quote.currency, "extras": [e.stored() for e in o.extras],
        }
        for o in offers
    ])
