"""Every request example of the docs (docs/examples/, shown in docs/integrators/examples.md and the
README's first calls) sent to the running sandbox, in the order a reader would send them, and every
answer compared with the one the docs show, ids and times aside. An example that drifts from the
service fails here.

``TRANSFERS_UPDATE_EXAMPLES=1`` writes the answers the service gives into the ``.out`` files instead
(after a deliberate change of an answer), as ``TRANSFERS_UPDATE_SCREENSHOTS`` does for screenshots.
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.e2e.doc_examples import (
    EXAMPLES,
    ROOT,
    VOLATILE_KEYS,
    Answer,
    canonical,
    command_text,
    example_names,
    parse_curl,
    read_answer,
    write_answer,
)
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import client_events
from transfers.quality import service as quality

UPDATE = os.environ.get("TRANSFERS_UPDATE_EXAMPLES") == "1"
DOCUMENTED_DATE = date(2027, 3, 1)  # the pickup date the examples are written with
BOOKING = "/api/v1/booking-api/booking"
# Examples whose answer depends on how far the worker got (a delivery to a host that does not exist):
# these fields are compared by presence only there.
RACY = {"07-deliveries": frozenset({"status", "attempts", "last_http_status", "last_outcome"})}


def pickup_date_today() -> str:
    """The date sent instead of the documented one once that one is no longer 1 day..300 days ahead."""
    today = datetime.now(UTC).date()
    if UPDATE or timedelta(days=1) < DOCUMENTED_DATE - today < timedelta(days=300):
        return DOCUMENTED_DATE.isoformat()
    return (today + timedelta(days=60)).isoformat()


class Reader:
    """Sends the docs' examples one by one, as a reader would, keeping what later ones refer to."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.variables: dict[str, str] = {}
        self.checked: list[str] = []

    async def run(self, group: str, name: str) -> Any:
        text = command_text(group, name).replace(DOCUMENTED_DATE.isoformat(), pickup_date_today())
        request = parse_curl(text, self.variables)
        response = await self.http.request(
            request.method, request.target, headers=request.headers, content=request.body
        )
        body = response.json() if response.content else None
        actual = Answer(response.status_code, body)
        if UPDATE:
            write_answer(group, name, actual)
        documented = read_answer(group, name)
        volatile = VOLATILE_KEYS | RACY.get(name, frozenset())
        assert actual.status == documented.status, (group, name, actual)
        assert canonical(actual.body, volatile) == canonical(documented.body, volatile), (group, name)
        self.checked.append(f"{group}/{name}")
        return body


async def wait_for(http: httpx.AsyncClient, key: str, reservation_no: str, done: Any) -> dict[str, Any]:
    """Reads the booking until ``done(booking)``: the sandbox partner answers through the worker."""
    booking: dict[str, Any] = {}
    for _ in range(400):
        booking = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
        if done(booking):
            return booking
        await asyncio.sleep(0.05)
    raise AssertionError(f"{reservation_no} never got there: {booking}")


async def all_fanned_out(db: Database, client_id: int) -> None:
    """Waits until the worker has fanned out every event of the client. The incident's events are written
    with the clock an hour past a pickup months ahead: an endpoint created before the worker fans them
    out would count as older than they are and receive them (docs/rules/webhooks.md), which is not what
    the deliveries example shows (docs/rules/webhooks.md#events)."""
    waiting = select(func.count()).where(
        client_events.c.client_id == client_id, client_events.c.fanned_out_at.is_(None)
    )
    for _ in range(400):
        async with db.read() as conn:
            if (await conn.execute(waiting)).scalar_one() == 0:
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"client {client_id}'s events not fanned out within 20 s")


async def test_every_documented_example_answers_as_documented(
    sandbox: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    async with httpx.AsyncClient(base_url=sandbox.url, timeout=30) as http:
        reader = Reader(http)
        reader.variables["KEY"] = key

        # The booking API, from reference data to a cancelled booking and the wallet statement.
        group = "booking-api"
        for name in ("01-car-types", "02-car-segments", "03-car-services", "04-cancellation-reasons"):
            await reader.run(group, name)
        found = await reader.run(group, "05-search")
        reader.variables["SEARCH_ID"] = found["search_id"]
        created = await reader.run(group, "06-create")
        reservation_no = created["booking"]["reservation_no"]
        reader.variables["RESERVATION_NO"] = reservation_no
        await wait_for(http, key, reservation_no, lambda b: b["status"] == "APPROVED")
        await reader.run(group, "07-get")
        await reader.run(group, "08-list")
        await reader.run(group, "09-amend")
        await wait_for(http, key, reservation_no, lambda b: (b["amendment"] or {}).get("status") == "APPLIED")
        for name in ("10-cancellation-quote", "11-cancel", "12-wallet", "13-wallet-entries"):
            await reader.run(group, name)

        # Incidents (docs/rules/incidents.md): on a second booking, the clock an hour past its pickup.
        again = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
        ride = await http.post(BOOKING, json=booking_body(again["search_id"], 1), headers=bearer(key))
        ridden = ride.json()["booking"]["reservation_no"]
        pickup = await wait_for(http, key, ridden, lambda b: b["status"] == "APPROVED")
        reader.variables["RESERVATION_NO"] = ridden
        clock.offset = datetime.fromisoformat(pickup["pickup_datetime"]) + timedelta(hours=1) - datetime.now(UTC)
        try:
            for name in ("14-report-incident", "15-list-incidents"):
                await reader.run(group, name)
        finally:
            clock.offset = timedelta()
        # docs/rules/return-trips.md: a return search and both legs booked in one call
        found = await reader.run(group, "16-return-search")
        reader.variables["SEARCH_ID"] = found["search_id"]
        reader.variables["RETURN_VEHICLE_ID"] = found["return_vehicles"][0]["vehicle_id"]
        await reader.run(group, "17-return-create")
        await reader.run(group, "18-wallets")  # docs/rules/wallet.md#currencies: one wallet per currency
        reader.variables["RESERVATION_NO"] = ridden
        await reader.run(group, "19-list-messages")  # docs/rules/messages.md#seen: none while messages are off
        reader.variables["RESERVATION_NO"] = reservation_no  # the errors below are about the cancelled one

        # Errors, each with what to do about it on docs/integrators/errors.md.
        for name in example_names("errors"):
            await reader.run("errors", name)

        # Webhook endpoints.
        await all_fanned_out(db, client_id)
        endpoint = await reader.run("webhooks", "01-create-endpoint")
        reader.variables["ENDPOINT_ID"] = endpoint["id"]
        for name in example_names("webhooks")[1:]:
            await reader.run("webhooks", name)

        # The reverse API, as a partner holding a booking that waits for it.
        _, partner_id, partner_key = await make_partner(
            airports=("LHR",), create_status="PENDING", name="Heathrow Cars"
        )
        reader.variables["PARTNER_KEY"] = partner_key
        found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
        vehicle = next(v for v in found["vehicles"] if v["company"] == "Heathrow Cars")
        held = await http.post(
            BOOKING, json=booking_body(found["search_id"], vehicle["vehicle_id"]), headers=bearer(key)
        )
        reader.variables["RESERVATION_NO"] = held.json()["booking"]["reservation_no"]
        for name in example_names("reverse-api"):
            if name == "03-driver-event":  # the ride: the clock half an hour before the pickup
                info = (
                    await http.get(
                        f"/api/v1/reverse/booking/info/{reader.variables['RESERVATION_NO']}",
                        headers=bearer(partner_key),
                    )
                ).json()
                pickup_at = datetime.fromisoformat(info["booking_details"]["pickup_datetime"])
                clock.advance(pickup_at - timedelta(minutes=30) - clock.now())
                reader.variables["OCCURRED_AT"] = (clock.now() - timedelta(seconds=20)).isoformat()
                reader.variables["POSITION_AT"] = (clock.now() - timedelta(seconds=40)).isoformat()
            if name == "09-scorecard":  # scored now: its booking's pickup has not settled, so a new partner's 91
                as_of = clock.now().replace(microsecond=0)
                await quality.compute_and_store(db, as_of, now=clock.now(), partner_id=partner_id)
            await reader.run("reverse-api", name)

    every = {f"{group.name}/{sh.stem}" for group in EXAMPLES.iterdir() for sh in group.glob("*.sh")}
    assert set(reader.checked) == every, every - set(reader.checked)


def test_the_examples_page_shows_every_example_with_its_answer() -> None:
    page = (ROOT / "docs" / "integrators" / "examples.md").read_text(encoding="utf-8")
    for sh in EXAMPLES.glob("*/*.sh"):
        relative = sh.relative_to(ROOT / "docs").as_posix()
        assert f'--8<-- "{relative}"' in page, relative
        assert f'--8<-- "{relative[:-3]}.out"' in page, relative


@pytest.mark.parametrize("name", ["05-search", "06-create", "07-get", "11-cancel"])
def test_the_readme_first_calls_are_tested_examples(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert command_text("booking-api", name).strip() in readme, name
