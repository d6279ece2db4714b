"""The last seat of a hosted vehicle's day, wanted by two bookings at once through two API
processes on one PostgreSQL (docs/rules/hosted-partners.md: "two concurrent bookings for the last seat of a day
cannot both succeed"). Several days are raced, each with one seat left: every day exactly one
booking wins, the other gets 409 ``VEHICLE_UNAVAILABLE`` and is charged nothing."""

from __future__ import annotations

import asyncio
import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.booking_invariants import check_booking_invariants
from tests.conftest import bearer
from tests.helpers import booking_body, future_local, search_body
from tests.invariants import check_wallet_invariants
from tests.process.conftest import FreshDatabase, Processes
from transfers.db.tables import bookings, hosted_capacity, wallets
from transfers.hosted import service as hosted_service

pytestmark = [pytest.mark.slow, pytest.mark.pg_only]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
EXAMPLE = json.loads((Path(__file__).parents[2] / "examples" / "rate-card.json").read_text())
DAYS = 6
POINT = {"type": "POINT", "lat": 53.4808, "lng": -2.2426, "name": "Manchester"}


async def test_two_api_processes_race_for_the_last_seat(fresh_db: FreshDatabase, procs: Processes) -> None:
    card = copy.deepcopy(EXAMPLE)
    card["vehicles"][0]["daily_capacity"] = 1
    made = await hosted_service.register_hosted_partner(
        fresh_db.db,
        fresh_db.clock,
        fresh_db.box,
        name="Hosted race",
        airports=("MAN",),
        markup_percent=Decimal(0),
        actor="tests",
    )
    await hosted_service.set_rate_card(fresh_db.db, fresh_db.clock, made.partner_id, card, actor="tests")
    clients = [await fresh_db.make_client(balance="1000.00") for _ in range(2)]
    env = procs.env(fresh_db.url)
    apis = [await procs.serve(f"api-{n}", env, "--no-worker", wait=False) for n in (1, 2)]
    for api in apis:
        await procs.wait_healthy(api)
    https = [httpx.AsyncClient(base_url=api.url, timeout=30) for api in apis]
    try:
        outcomes: list[list[int]] = []
        for day in range(DAYS):
            pickup = future_local(days=5 + day)
            offers: list[tuple[str, dict[str, Any]]] = []
            for n, (_, key) in enumerate(clients):
                found = (
                    await https[n].post(
                        SEARCH,
                        json=search_body(
                            pickup_datetime=pickup,
                            pickup_location={"type": "AIRPORT", "iata_code": "MAN"},
                            dropoff_location=POINT,
                        ),
                        headers=bearer(key),
                    )
                ).json()
                sedan = next(v for v in found["vehicles"] if v["type"] == "SEDAN")
                offers.append((key, booking_body(found["search_id"], sedan["vehicle_id"])))
            answers = await asyncio.gather(
                *(https[n].post(BOOKING, json=body, headers=bearer(key)) for n, (key, body) in enumerate(offers))
            )
            outcomes.append(sorted(a.status_code for a in answers))
            for answer in answers:
                if answer.status_code == 409:
                    assert answer.json()["code"] == "VEHICLE_UNAVAILABLE"
        assert outcomes == [[200, 409]] * DAYS
        async with fresh_db.db.read() as conn:
            counters = (
                (
                    await conn.execute(
                        select(hosted_capacity.c.booked).where(hosted_capacity.c.partner_id == made.partner_id)
                    )
                )
                .scalars()
                .all()
            )
            booked = (
                (await conn.execute(select(bookings.c.id).where(bookings.c.partner_id == made.partner_id)))
                .scalars()
                .all()
            )
            balances = (await conn.execute(select(wallets.c.balance))).scalars().all()
        assert sorted(counters) == [1] * DAYS and len(booked) == DAYS
        assert sum(Decimal(b) for b in balances) == Decimal("2000.00") - DAYS * Decimal("40.00")
        await check_wallet_invariants(fresh_db.db)
        await check_booking_invariants(fresh_db.db)
    finally:
        for http in https:
            await http.aclose()
        for api in apis:
            await procs.stop(api)
