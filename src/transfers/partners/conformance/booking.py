"""The booking checks (PARTNER_API.md 3.2-3.3): create a test booking (``TB-CHECK...``) for the
searched vehicle, send the same message again with the same ``webhook-id`` (a retry after a lost
answer must be deduplicated, not booked twice), create the way back of a return trip as the service
sends it (its own ONEWAY create with ``trip`` ``{"id": "TR-...", "leg": 2}``, the route reversed, on
its own later day, no flight: docs/rules/return-trips.md#create), then read the first back with
info and ask for one it never received (404).

A create answer that breaks the contract is reported with what the service would then do
(retry, or decline and refund), because that consequence is what a partner's developer weighs.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from transfers import money
from transfers.partners.client import CallResult, info_path
from transfers.partners.conformance.judging import late, parsed, transport_problem
from transfers.partners.conformance.session import CheckSession
from transfers.partners.wire import WireCreateAnswer, WireInfoAnswer, WireVehicle

RESERVATION_PREFIX = "TB-CHECK"
TRIP_PREFIX = "TR-CHECK"
RETURN_DAYS_LATER = 3  # the way back's pickup: this many days after the way out's, same local time
_REF_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"


def check_reservation_no() -> str:
    """A fresh test booking number: recognisable as a check in the partner's records."""
    return RESERVATION_PREFIX + "".join(secrets.choice(_REF_ALPHABET) for _ in range(8))


def webhook_id() -> str:
    """A Standard Webhooks message id, as the outbox gives each message."""
    return f"msg_{uuid.uuid4().hex}"


@dataclass
class Booking:
    """The test booking as the later checks need it: what was sent, under which message id, and
    the partner's answer (None when create gave no valid answer, so the later checks skip)."""

    reservation_no: str
    payload: dict[str, Any]
    webhook_id: str
    answer: WireCreateAnswer | None = None


def create_consequence(result: CallResult, answer: WireCreateAnswer | None, deadline: float) -> str | None:
    """What the service does with a create answer that broke the contract (PARTNER_API.md 3.2)."""
    status = result.http_status or 0
    error_body = isinstance(result.body, dict) and result.body.get("status") == "Error"
    if status == 429 or status >= 500 or result.outcome not in ("ok", "http_error"):
        return "the service would retry"
    if result.outcome == "http_error" or error_body:
        return "the service would decline the booking and refund the client"
    if answer is None:
        return "the service would retry (a 2xx that breaks the rules counts as not delivered)"
    if late(result, deadline):
        return "the service would retry (its first attempt times out)"
    return None


class BookingChecks(CheckSession):
    def create_payload(self, reservation_no: str, vehicle: WireVehicle, search: dict[str, Any]) -> dict[str, Any]:
        """As ``bookings.service._create_payload`` builds it: no extras, so the net total is the vehicle's price."""
        return {
            "reservation_no": reservation_no,
            "vehicle_id": vehicle.id,
            "passenger_info": {
                "name": "Conformance",
                "surname": "Check",
                "email": "conformance-check@example.com",
                "phone": "+447700900123",
            },
            "flight_info": {
                "flight_number": "BA117",
                "extra_requests": "Test booking by `transfers partners check`; it is cancelled again.",
            },
            "trip": {
                "from": search["from"],
                "to": search["to"],
                "date": search["date"],
                "passengers": search["passengers"],
                "suitcase": 1,
                "small_bags": 0,
                # docs/rules/return-trips.md#create: a single booking's create, as the service sends it
                "id": None,
                "leg": None,
            },
            "extras": [],
            "price": {"total": money.text(vehicle.price, vehicle.currency), "currency": vehicle.currency},
        }

    async def check_create(self, vehicle: WireVehicle | None, search: dict[str, Any]) -> Booking | None:
        path = "/booking/create"
        if vehicle is None:
            reason = "not run: the search gave no vehicle to book"
            self.skip("create", "POST", path, reason)
            self.skip("create retry, same webhook-id", "POST", path, reason)
            return None
        booking = Booking(check_reservation_no(), {}, webhook_id())
        self.reservation_no = booking.reservation_no
        booking.payload = self.create_payload(booking.reservation_no, vehicle, search)
        deadline = self.deadlines.create
        first = await self.call("POST", path, booking.payload, deadline, webhook_id=booking.webhook_id)
        problems = self.judge(first, deadline, WireCreateAnswer, "POST", path)
        booking.answer = parsed(WireCreateAnswer, first.body) if first.ok else None
        consequence = create_consequence(first, booking.answer, deadline) if problems else None
        if consequence:
            problems.append(consequence)
        note = None
        if booking.answer is not None:
            note = f"{booking.answer.status} for {booking.reservation_no} (vehicle {booking.payload['vehicle_id']!r}"
            note += f", partner reference {booking.answer.reservation_no})" if booking.answer.reservation_no else ")"
        self.record("create", "POST", path, first, deadline, problems, note)
        if booking.answer is None:
            self.skip("create retry, same webhook-id", "POST", path, "not run: create gave no valid answer")
            return booking
        await self.check_create_retry(booking)
        return booking

    async def check_return_leg(self, booking: Booking | None) -> Booking | None:
        """The way back of a return trip (docs/rules/return-trips.md#create): the same vehicle,
        passenger and luggage, from the point to the airport ``RETURN_DAYS_LATER`` days on, no
        flight and ``trip`` ``{"id": "TR-CHECK...", "leg": 2}``; passes like ``create``."""
        name, path = "create, way back (trip leg 2)", "/booking/create"
        if booking is None or booking.answer is None:
            self.skip(name, "POST", path, "not run: create gave no valid answer")
            return None
        back = Booking(check_reservation_no(), return_leg_payload(booking.payload), webhook_id())
        back.payload["reservation_no"] = back.reservation_no
        deadline = self.deadlines.create
        result = await self.call("POST", path, back.payload, deadline, webhook_id=back.webhook_id)
        problems = self.judge(result, deadline, WireCreateAnswer, "POST", path)
        back.answer = parsed(WireCreateAnswer, result.body) if result.ok else None
        consequence = create_consequence(result, back.answer, deadline) if problems else None
        if consequence:
            problems.append(consequence)
        note = None
        if back.answer is not None:
            note = f"{back.answer.status} for {back.reservation_no} (trip {back.payload['trip']['id']}, leg 2"
            note += f", partner reference {back.answer.reservation_no})" if back.answer.reservation_no else ")"
        self.record(name, "POST", path, result, deadline, problems, note)
        return back

    async def check_create_retry(self, booking: Booking) -> None:
        """The same message again (a retry after a lost answer): the first answer must come back."""
        path, deadline = "/booking/create", self.deadlines.other
        again = await self.call("POST", path, booking.payload, deadline, webhook_id=booking.webhook_id)
        problems = self.judge(again, deadline, WireCreateAnswer, "POST", path)
        second = parsed(WireCreateAnswer, again.body) if again.ok else None
        note = None
        first = booking.answer
        if second is not None and first is not None:
            if first.reservation_no is not None or second.reservation_no is not None:
                if first.reservation_no != second.reservation_no:
                    problems.append(
                        f"not deduplicated: the retry answered reservation_no {second.reservation_no!r}, "
                        f"the first delivery {first.reservation_no!r} (a second booking?)"
                    )
                note = f"same answer ({first.status}, partner reference {first.reservation_no})"
            else:
                note = f"same status {first.status} (no partner reservation_no to compare)"
            if first.status != second.status:
                problems.append(f"not deduplicated: the retry answered {second.status}, the first {first.status}")
        self.record("create retry, same webhook-id", "POST", path, again, deadline, problems, note)

    async def check_info(self, booking: Booking | None) -> None:
        deadline = self.deadlines.other
        if booking is None or booking.answer is None:
            self.skip("info", "GET", "/booking/info/{reservation_no}", "not run: no booking was created")
        else:
            path = info_path(booking.reservation_no)
            result = await self.call("GET", path, None, deadline)
            problems = self.judge(result, deadline, WireInfoAnswer, "GET", "/booking/info/{reservation_no}")
            info = parsed(WireInfoAnswer, result.body) if result.ok else None
            self.record("info", "GET", path, result, deadline, problems, f"status {info.status}" if info else None)
        unknown = info_path(RESERVATION_PREFIX + "-UNKNOWN-" + secrets.token_hex(4).upper())
        result = await self.call("GET", unknown, None, deadline)
        problems = []
        if result.http_status != 404:
            seen = transport_problem(result, self.deadlines.wait(deadline)) or f"HTTP {result.http_status}"
            problems.append(f"{seen} for a booking it never received; expected 404")
        else:
            problems.extend(p for p in [late(result, deadline)] if p)
        self.record("info, unknown booking", "GET", unknown, result, deadline, problems, "404")


def return_leg_payload(out: dict[str, Any]) -> dict[str, Any]:
    """The way back's create for the way out's ``out`` (docs/partners/index.md, "Return trips"): the
    route reversed, ``RETURN_DAYS_LATER`` days later at the same local time, ``flight_number`` null
    (the client gave no departing flight), ``trip.id`` a check trip and ``trip.leg`` 2."""
    trip = out["trip"]
    date = datetime.fromisoformat(trip["date"]) + timedelta(days=RETURN_DAYS_LATER)
    trip_id = TRIP_PREFIX + "".join(secrets.choice(_REF_ALPHABET) for _ in range(8))
    return {
        **out,
        "flight_info": {"flight_number": None, "extra_requests": out["flight_info"]["extra_requests"]},
        "trip": {**trip, "from": trip["to"], "to": trip["from"], "date": date.isoformat(), "id": trip_id, "leg": 2},
    }
