"""The update checks (PARTNER_API.md 3.4-3.5) on the test booking: an ``AMENDED`` update, which the
partner may accept or refuse but must answer (a refusal with a message for the client), then
``CANCELLED`` twice, which must answer Success both times (a cancel is retried like any message).

Cancelling comes last on purpose: it is also how the check cleans up after itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from transfers.partners.conformance.booking import Booking, webhook_id
from transfers.partners.conformance.judging import said
from transfers.partners.conformance.session import CheckSession
from transfers.partners.wire import WireResult

_PATH = "/booking/update"


def answered_amendment(body: Any) -> list[str]:
    """Success, or Error with a message for the client (a bare refusal tells the client nothing)."""
    if body.get("status") == "Error" and not str(body.get("message") or "").strip():
        return ['answered {"status":"Error"} without a message; the client is shown why the amendment was refused']
    return []


def success(body: Any) -> list[str]:
    if body.get("status") != "Success":
        return [f'answered status {body.get("status")!r}{said(body)}; expected "Success"']
    return []


class UpdateChecks(CheckSession):
    def amended_payload(self, booking: Booking) -> dict[str, Any]:
        """An ``AMENDED`` update as ``bookings.amend.amended_payload`` builds it (PARTNER_API.md
        3.5): the flight number and the extra requests change, the rest is the booked trip."""
        flight = {"flight_number": "BA119", "extra_requests": "Amended by `transfers partners check`."}
        created = booking.payload
        return {
            "reservation_no": booking.reservation_no,
            "status": "AMENDED",
            "changes": {"travel_details": flight},
            "vehicle_id": created["vehicle_id"],
            "passenger_info": created["passenger_info"],
            "flight_info": flight,
            "trip": created["trip"],
            "extras": created["extras"],
        }

    async def check_amend(self, booking: Booking | None) -> None:
        """An amendment must be answered (docs/rules/cancellation.md): Success applies it, an Error with a message
        rejects it; both are valid answers, anything else is not."""
        path, deadline, name = _PATH, self.deadlines.other, "update AMENDED"
        if booking is None or booking.answer is None:
            self.skip(name, "PUT", path, "not run: no booking was created")
            return
        if booking.answer.status == "DECLINED":
            self.skip(name, "PUT", path, "not run: create answered DECLINED (nothing to amend)")
            return
        result = await self.call("PUT", path, self.amended_payload(booking), deadline, webhook_id=webhook_id())
        problems = self.judge(result, deadline, WireResult, "PUT", path, answered_amendment)
        body = result.body if isinstance(result.body, dict) else {}
        note = "Success" if body.get("status") == "Success" else f"Error{said(body)}"
        self.record(name, "PUT", path, result, deadline, problems, note if not problems else None)

    def flight_notice_payload(self, booking: Booking) -> dict[str, Any]:
        """A flight notice as ``flights.watch`` sends it (docs/rules/flights.md#pickup-moves): the
        pickup followed a 45-minute delay; the rest is the booked trip."""
        created = booking.payload
        trip = dict(created["trip"])
        moved = _later(str(trip.get("date", "")), minutes=45)
        if moved is not None:
            trip["date"] = moved
        return {
            "reservation_no": booking.reservation_no,
            "status": "AMENDED",
            "reason": "FLIGHT_UPDATE",
            "changes": {"pickup_datetime": trip.get("date")},
            "vehicle_id": created["vehicle_id"],
            "passenger_info": created["passenger_info"],
            "flight_info": created["flight_info"],
            "trip": trip,
            "extras": created["extras"],
        }

    async def check_flight_notice(self, booking: Booking | None) -> None:
        """A flight notice (docs/rules/flights.md) must be answered; it cannot be refused, so an Error is recorded (a
        warning in the note) and is not a failure of the contract."""
        path, deadline, name = _PATH, self.deadlines.other, "update AMENDED FLIGHT_UPDATE"
        if booking is None or booking.answer is None:
            self.skip(name, "PUT", path, "not run: no booking was created")
            return
        if booking.answer.status == "DECLINED":
            self.skip(name, "PUT", path, "not run: create answered DECLINED (no pickup to move)")
            return
        result = await self.call("PUT", path, self.flight_notice_payload(booking), deadline, webhook_id=webhook_id())
        problems = self.judge(result, deadline, WireResult, "PUT", path, lambda body: [])
        body = result.body if isinstance(result.body, dict) else {}
        note = "Success" if body.get("status") == "Success" else f"Error{said(body)} (recorded; the pickup still moves)"
        self.record(name, "PUT", path, result, deadline, problems, note if not problems else None)

    async def check_update(
        self,
        booking: Booking | None,
        names: tuple[str, ...] = ("update CANCELLED", "update CANCELLED again"),
        missing: str = "no booking was created",
    ) -> None:
        """Cancel ``booking`` once per name (twice for the test booking: the second must answer
        Success again; once for the way back of the return-trip check)."""
        path, deadline = _PATH, self.deadlines.other
        if booking is None or booking.answer is None:
            for name in names:
                self.skip(name, "PUT", path, f"not run: {missing}")
            return
        if booking.answer.status == "DECLINED":
            for name in names:
                self.skip(name, "PUT", path, "not run: create answered DECLINED (nothing to cancel)")
            return
        body = {
            "reservation_no": booking.reservation_no,
            "status": "CANCELLED",
            "cancel_reason": "Change of plans",
            "note": "Test booking by `transfers partners check`",
        }
        for name in names:  # cancelling twice must answer Success again
            result = await self.call("PUT", path, body, deadline)
            problems = self.judge(result, deadline, WireResult, "PUT", path, success)
            self.record(name, "PUT", path, result, deadline, problems, "Success")


def _later(local_iso: str, *, minutes: int) -> str | None:
    """``local_iso`` (the trip's ``date``, local with its offset) moved by ``minutes``; None when unreadable."""
    try:
        return (datetime.fromisoformat(local_iso) + timedelta(minutes=minutes)).isoformat()
    except ValueError:
        return None
