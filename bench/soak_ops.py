"""The soak's workload (``bench/soak.py``): the day's mix of operations at a steady rate.

Mostly searches; single bookings (far ahead, at fast, slow and flaky partners and the hosted
one), return pairs, bookings on delayed flights (the sandbox flight provider's ``ZZ1mmm`` is
``mmm`` minutes late), cancels (a partner whose policy keeps a 25 % fee, others free), amendments,
GETs. The partners' side too: some bookings approved through the reverse API, and rides whose
pickups are minutes away followed through driver events and positions to drop-off, a driver
no-show (an incident refunded at once) or a late driver (an incident left open).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import traceback
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.soak_load import (
    API,
    DRIVER,
    PASSENGER,
    REVERSE,
    Booked,
    Http,
    far_pickup,
    new_key,
    pick,
    search_body,
    soon_pickup,
)
from bench.soak_partners import HOSTED, Agency, PartnerSetup, SoakPartner

MIX = (
    ("search", 44),
    ("get", 9),
    ("book", 13),
    ("return", 4),
    ("ride", 4),
    ("delayed", 2),
    ("hosted", 4),
    ("cancel", 8),
    ("amend", 5),
)
SEARCH_AIRPORTS = (("LHR", 5), ("LGW", 1), ("STN", 1), ("LCY", 2))
BOOK_AIRPORTS = (("LHR", 4), ("LGW", 1), ("STN", 2))
MAX_INFLIGHT = 24
LHR = (51.4700, -0.4543)


def weighted(rng: random.Random, table: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([name for name, _ in table], [weight for _, weight in table])[0]


class Workload:
    def __init__(
        self,
        http: Http,
        partners: dict[str, PartnerSetup],
        agencies: list[Agency],
        *,
        seed: int,
        incidents_until: float,
    ) -> None:
        self.http = http
        self.partners = partners
        self.agencies = agencies
        self.client_keys = [a.api_key for a in agencies]
        self.rng = random.Random(seed)
        self.booked: list[Booked] = []
        self.by_no: dict[str, Booked] = {}
        self.rides: list[asyncio.Task[None]] = []
        self.approvals: list[asyncio.Task[None]] = []
        self.errors: list[str] = []  # the soak's own failures (a bug here, not in the service)
        self.ops: dict[str, int] = {}
        self.skipped = 0
        self.incidents_until = incidents_until  # time.monotonic(): later rides are not left waiting for pickup
        self._seen: dict[str, int] = {}

    # --- the loop ------------------------------------------------------------------------------

    async def run(self, seconds: float, rate: float) -> None:
        inflight: set[asyncio.Task[None]] = set()
        interval = 1.0 / rate
        started = time.monotonic()
        due = started
        approver = asyncio.create_task(self._partners_approve(started + seconds))
        while time.monotonic() - started < seconds and not self.http.exhausted:
            if len(inflight) < MAX_INFLIGHT:
                task = asyncio.create_task(self._guarded(weighted(self.rng, MIX)))
                inflight.add(task)
                task.add_done_callback(inflight.discard)
            else:
                self.skipped += 1
            due += interval
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*inflight, return_exceptions=True), timeout=150)
        approver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await approver

    async def _guarded(self, op: str) -> None:
        self.ops[op] = self.ops.get(op, 0) + 1
        try:
            await getattr(self, "op_" + op)()
        except Exception:
            self.errors.append(f"{op}: {traceback.format_exc(limit=3)}")

    def client(self) -> tuple[int, str]:
        n = self.rng.randrange(len(self.client_keys))
        return n, self.client_keys[n]

    def currency(self, client: int) -> str:
        """One of the agency's wallets' currencies: it searches and books in each."""
        return self.rng.choice(self.agencies[client].currencies)

    # --- operations ------------------------------------------------------------------------------

    async def _search(self, op: str, key: str, body: dict[str, Any]) -> dict[str, Any] | None:
        response = await self.http.call(op, "POST", f"{API}/search", key=key, json=body)
        if response is None or response.status_code != 200:
            return None
        found: dict[str, Any] = response.json()
        return found

    async def op_search(self) -> None:
        client, key = self.client()
        airport = weighted(self.rng, SEARCH_AIRPORTS)
        body = search_body(airport, far_pickup(self.rng), currency=self.currency(client))
        await self._search("search", key, body)

    async def op_get(self) -> None:
        if not self.by_no:
            return await self.op_search()
        number = self.rng.choice(list(self.by_no))
        key = self.client_keys[self.by_no[number].client]
        await self.http.call("get", "GET", f"{API}/booking", key=key, params={"reservation_no": number})
        return None

    async def op_book(self) -> None:
        airport = weighted(self.rng, BOOK_AIRPORTS)
        names = [n for n, p in self.partners.items() if airport in p.airports]
        await self._book("oneway", airport, self.rng.choice(names), far_pickup(self.rng), "BA117")

    async def op_hosted(self) -> None:
        await self._book("hosted", "LCY", HOSTED, far_pickup(self.rng), "BA117")

    async def op_delayed(self) -> None:
        late = f"ZZ1{self.rng.randint(20, 150):03d}"  # the sandbox flight provider: that many minutes late
        await self._book("delayed", "LHR", self.rng.choice(("Fast A", "Fast B")), far_pickup(self.rng), late)

    async def op_return(self) -> None:
        await self._book("return", "LHR", self.rng.choice(("Fast A", "Fast B")), far_pickup(self.rng), "BA117")

    async def op_ride(self) -> None:
        await self._book("ride", "LHR", "Fast A", soon_pickup(), "BA117")

    async def _book(self, kind: str, airport: str, partner: str, pickup: datetime, flight: str) -> None:
        client, key = self.client()
        currency = self.currency(client)
        back = pickup + timedelta(days=3) if kind == "return" else None
        found = await self._search("search", key, search_body(airport, pickup, back=back, currency=currency))
        if found is None:
            return
        vehicle = pick(found["vehicles"], partner, self.rng) or pick(found["vehicles"], None, self.rng)
        if vehicle is None:
            return
        partner = vehicle["company"]
        body: dict[str, Any] = {
            "search_id": found["search_id"],
            "vehicle_id": vehicle["vehicle_id"],
            "suitcase": 1,
            "small_bags": 1,
            "passenger": PASSENGER,
            "travel_details": {"flight_number": flight, "extra_requests": None},
        }
        if back is not None:
            way_back = pick(found.get("return_vehicles") or [], None, self.rng)
            if way_back is None:
                kind = "oneway"
            else:
                body["return_vehicle_id"] = way_back["vehicle_id"]
                body["return_travel_details"] = {"flight_number": "BA118", "extra_requests": None}
        booked = Booked(new_key(kind), client, kind, partner, flight, pickup=pickup, currency=currency)
        self.booked.append(booked)
        op = "create_pair" if "return_vehicle_id" in body else "create"
        response = await self.http.call(op, "POST", f"{API}/booking", key=key, idem=booked.key, settle=True, json=body)
        booked.status = None if response is None else response.status_code
        if response is None or response.status_code != 200:
            booked.answer = {} if response is None else _json(response)
            return
        booked.answer = response.json()
        for leg in ("booking", "return_booking"):
            if leg in booked.answer:
                booked.reservation_nos.append(booked.answer[leg]["reservation_no"])
                booked.totals.append(booked.answer[leg]["price"]["total"])
                self.by_no[booked.answer[leg]["reservation_no"]] = booked
        if kind == "ride":
            self.rides.append(asyncio.create_task(self._guarded_ride(booked)))

    def _candidates(
        self, *, kinds: tuple[str, ...], partners: tuple[str, ...] | None = None
    ) -> list[tuple[Booked, str]]:
        return [
            (b, no)
            for b in self.booked
            if b.status == 200 and b.kind in kinds and (partners is None or b.partner in partners)
            for no in b.reservation_nos
            if no not in b.cancels and no not in b.amends
        ]

    async def op_cancel(self) -> None:
        candidates = self._candidates(kinds=("oneway", "return", "delayed", "hosted"))
        if not candidates:
            return await self.op_search()
        booked, number = self.rng.choice(candidates)
        booked.cancels[number] = (None, {})
        response = await self.http.call(
            "cancel",
            "DELETE",
            f"{API}/booking",
            key=self.client_keys[booked.client],
            idem=new_key("cancel"),
            settle=True,
            params={"reservation_no": number, "cancellation_id": 1},
        )
        booked.cancels[number] = (None if response is None else response.status_code, _json(response))
        return None

    async def op_amend(self) -> None:
        candidates = self._candidates(kinds=("oneway",), partners=("Fast A", "Fast C", "Slow", "Flaky"))
        if not candidates:
            return await self.op_search()
        booked, number = self.rng.choice(candidates)
        booked.amends[number] = None
        response = await self.http.call(
            "amend",
            "PATCH",
            f"{API}/booking",
            key=self.client_keys[booked.client],
            idem=new_key("amend"),
            settle=True,
            params={"reservation_no": number},
            json={"passenger": {"name": self.rng.choice(("Grace", "Alan", "Edsger"))}},
        )
        booked.amends[number] = None if response is None else response.status_code
        return None

    # --- the partners' side ----------------------------------------------------------------------

    async def approve(self, partner: str, number: str) -> bool:
        response = await self.http.call(
            "approve",
            "PUT",
            f"{REVERSE}/booking/update",
            key=self.partners[partner].api_key,
            settle=True,
            json={"reservation_no": number, "status": "APPROVED", "driver_info": DRIVER},
        )
        return response is not None and response.status_code == 200

    async def _partners_approve(self, until: float) -> None:
        """Each server partner approves about 40 % of the new bookings it was sent (rides are
        approved by their own ride)."""
        while time.monotonic() < until:
            await asyncio.sleep(1.0)
            for name, setup in self.partners.items():
                partner = setup.partner
                if partner is None:
                    continue
                calls = partner.calls("/booking/create")
                for call in calls[self._seen.get(name, 0) :]:
                    number = str((call.body or {}).get("reservation_no"))
                    booked = self.by_no.get(number)
                    if booked is None or booked.kind == "ride" or number in booked.approved:
                        continue
                    if self.rng.random() < 0.4 and partner.ok(call):
                        booked.approved.add(number)
                        self.approvals.append(asyncio.create_task(self._guarded_approve(name, number)))
                self._seen[name] = len(calls)

    async def _guarded_approve(self, partner: str, number: str) -> None:
        try:
            if await self.approve(partner, number):
                self.by_no[number].approved_ok.add(number)
        except Exception:
            self.errors.append(f"approve {number}: {traceback.format_exc(limit=3)}")

    async def _guarded_ride(self, booked: Booked) -> None:
        try:
            await self._ride(booked)
        except Exception:
            self.errors.append(f"ride {booked.reservation_nos}: {traceback.format_exc(limit=3)}")

    async def _ride(self, booked: Booked) -> None:
        number = booked.reservation_nos[0]
        partner = self.partners[booked.partner].partner
        assert isinstance(partner, SoakPartner) and booked.pickup is not None
        deadline = time.monotonic() + 60
        while not any((c.body or {}).get("reservation_no") == number for c in partner.calls("/booking/create")):
            if time.monotonic() > deadline:
                return
            await asyncio.sleep(0.3)
        if not await self.approve(booked.partner, number):
            return
        booked.approved.add(number)
        booked.approved_ok.add(number)
        until_pickup = (booked.pickup - datetime.now(UTC)).total_seconds()
        waits_for_pickup = time.monotonic() + until_pickup < self.incidents_until
        story = self.rng.choice(("complete", "no_show", "late")) if waits_for_pickup else "complete"
        await self._event(booked, number, "DRIVER_DEPARTED_TO_PICKUP")
        for _ in range(3):
            await self._positions(booked, number)
            await asyncio.sleep(self.rng.uniform(1.0, 3.0))
        if story == "no_show":
            await self._after_pickup(booked)
            booked.incident = "DRIVER_NO_SHOW"
            await self._incident(booked, number, "DRIVER_NO_SHOW")
            return
        await self._event(booked, number, "DRIVER_ARRIVED_AT_PICKUP")
        # The traveller walks to the car: long enough for the messages planner (a scheduled job, every
        # few seconds) and the worker to text driver_arrived while the booking is still APPROVED.
        await asyncio.sleep(self.rng.uniform(6.0, 10.0))
        if story == "late":
            await self._after_pickup(booked)
            booked.incident = "DRIVER_LATE"
            await self._incident(booked, number, "DRIVER_LATE")
        await self._event(booked, number, "DRIVER_DEPARTED_TO_DROPOFF")
        await self._positions(booked, number)
        await self._event(booked, number, "DRIVER_ARRIVED_AT_DROPOFF")

    async def _after_pickup(self, booked: Booked) -> None:
        assert booked.pickup is not None
        await asyncio.sleep(max(0.0, (booked.pickup - datetime.now(UTC)).total_seconds() + 2))

    async def _event(self, booked: Booked, number: str, kind: str) -> None:
        await self.http.call(
            "ride_event",
            "POST",
            f"{REVERSE}/booking/events",
            key=self.partners[booked.partner].api_key,
            settle=True,
            json={"reservation_no": number, "type": kind, "occurred_at": datetime.now(UTC).isoformat()},
        )

    async def _positions(self, booked: Booked, number: str) -> None:
        now = datetime.now(UTC)
        positions = [
            {
                "lat": LHR[0] + self.rng.uniform(-0.01, 0.01),
                "lng": LHR[1] + self.rng.uniform(-0.01, 0.01),
                "at": (now - timedelta(seconds=2 * (2 - i))).isoformat(),
                "heading": self.rng.randint(0, 359),
                "speed_kmh": self.rng.randint(0, 60),
            }
            for i in range(3)
        ]
        await self.http.call(
            "ride_position",
            "POST",
            f"{REVERSE}/booking/positions",
            key=self.partners[booked.partner].api_key,
            settle=True,
            json={"reservation_no": number, "positions": positions},
        )

    async def _incident(self, booked: Booked, number: str, kind: str) -> None:
        await self.http.call(
            "incident",
            "POST",
            f"{API}/booking/incidents",
            key=self.client_keys[booked.client],
            idem=new_key("incident"),
            settle=True,
            params={"reservation_no": number},
            json={"type": kind, "description": "Soak: the driver was not there on time."},
        )


def _json(response: Any) -> dict[str, Any]:
    if response is None:
        return {}
    try:
        value = response.json()
    except ValueError:
        return {"text": response.text[:300]}
    return value if isinstance(value, dict) else {"value": value}
