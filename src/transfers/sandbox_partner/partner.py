"""What the sandbox partner does with each call, independent of HTTP.

Create is synchronous from the duplicate check to the insert (no ``await`` in between), so two
concurrent deliveries of one booking cannot both create it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

import structlog

from transfers.sandbox_partner import fleet, ride
from transfers.sandbox_partner.config import SandboxPartnerConfig
from transfers.sandbox_partner.drivers import driver_for, meeting_point
from transfers.sandbox_partner.requests import CreateIn, SearchIn, UpdateIn
from transfers.sandbox_partner.reverse import ReverseApi
from transfers.sandbox_partner.scenarios import (
    NO_AMEND_MESSAGE,
    PARTNER_CANCEL_REASON,
    PARTNER_DOWN_FAILURES,
    SLOW_APPROVE_FACTOR,
    Scenario,
    active_scenarios,
)
from transfers.sandbox_partner.state import Booking, Ledger

log = structlog.get_logger("transfers.sandbox_partner")

Answer = tuple[int, dict[str, Any]]
_REF_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"


def error(status: int, message: str) -> Answer:
    return status, {"status": "Error", "message": message}


def _partner_reference() -> str:
    return "SBX-" + "".join(secrets.choice(_REF_ALPHABET) for _ in range(10))


class SandboxPartner:
    def __init__(self, config: SandboxPartnerConfig) -> None:
        self.config = config
        self.ledger = Ledger(config.max_bookings)
        self.reverse = ReverseApi(
            config.service_url,
            config.api_key,
            retry_delays=config.reverse_retry_delays,
            timeout_seconds=config.reverse_timeout_seconds,
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    def now(self) -> float:
        return self.config.clock.now().timestamp()

    # -- the four calls ------------------------------------------------------------------------

    def search(self, req: SearchIn) -> Answer:
        raw_from = req.origin.model_dump(exclude_none=True)
        raw_to = req.destination.model_dump(exclude_none=True)
        distance = fleet.distance_km(raw_from, raw_to)
        if distance is None:
            return error(422, "Unknown location: the airport code is not known to this partner")
        vehicles = fleet.quote(distance, req.passengers.party, self.config.currency)
        return 200, {"distance_km": distance, "vehicles": vehicles}

    def create(self, req: CreateIn, webhook_id: str | None) -> Answer:
        ref = req.reservation_no
        attempt = self.ledger.count_attempt(ref)
        if webhook_id and webhook_id in self.ledger.answers_by_webhook_id:
            return self.ledger.answers_by_webhook_id[webhook_id]
        existing = self.ledger.bookings.get(ref)
        if existing is not None:
            answer: Answer = (200, existing.first_answer)
        else:
            scenarios = active_scenarios(req.passenger_info.surname, req.flight_info.flight_number or "")
            if Scenario.PARTNER_DOWN in scenarios and attempt <= PARTNER_DOWN_FAILURES:
                log.info("sandbox_partner_down", reservation_no=ref, attempt=attempt)
                return error(503, "Service temporarily unavailable, try again later")
            answer = self._new_booking(req, scenarios)
            if answer[0] != 200:
                return answer  # a request error: nothing remembered, a corrected retry may succeed
        if webhook_id:
            self.ledger.answers_by_webhook_id[webhook_id] = answer
        return answer

    def info(self, reservation_no: str) -> Answer:
        booking = self.ledger.bookings.get(reservation_no)
        if booking is None:
            return error(404, "Booking not found")
        return 200, booking.info(self.now())

    def update(self, req: UpdateIn) -> Answer:
        booking = self.ledger.bookings.get(req.reservation_no)
        if req.status == "AMENDED":
            return self._amend(req, booking)
        if req.status != "CANCELLED":
            return error(422, "Only status CANCELLED or AMENDED can be sent to this partner")
        if booking is None:
            return error(404, "Booking not found")
        if booking.declined:
            return error(422, "The booking was declined; there is nothing to cancel")
        if booking.status(self.now()) != "CANCELLED":
            booking.cancelled_at = self.now()
            booking.cancel_reason = req.cancel_reason
            task = self._tasks.pop(booking.reservation_no, None)
            if task is not None:
                task.cancel()
            log.info(
                "sandbox_booking_cancelled",
                reservation_no=booking.reservation_no,
                partner_reference=booking.partner_reference,
                reason=req.cancel_reason,
            )
        return 200, {"status": "Success", "message": "Booking cancelled."}

    def _amend(self, req: UpdateIn, booking: Booking | None) -> Answer:
        """Accept an amendment (the new trip replaces the booked one), unless the booking is
        NOAMEND's (booked with, or amended to, that surname): then refuse it with a message."""
        if booking is None:
            return error(404, "Booking not found")
        if booking.declined or booking.status(self.now()) == "CANCELLED":
            return 200, {"status": "Error", "message": "The booking is no longer active"}
        if req.reason == "FLIGHT_UPDATE":  # a notice (docs/rules/flights.md#pickup-moves): noted, never refused
            if req.trip is not None:
                booking.details["date"] = req.trip.date.isoformat()
            booking.flight_updates += 1
            log.info("sandbox_pickup_followed_flight", reservation_no=booking.reservation_no, changes=req.changes)
            return 200, {"status": "Success", "message": "New pickup time noted."}
        surname = req.passenger_info.surname if req.passenger_info else ""
        if booking.no_amend or surname.strip().upper() == Scenario.NO_AMEND.value:
            return 200, {"status": "Error", "message": NO_AMEND_MESSAGE}
        if req.trip is not None:
            booking.details["date"] = req.trip.date.isoformat()
        if req.flight_info is not None:
            booking.details["flight_number"] = req.flight_info.flight_number
        booking.amendments += 1
        log.info("sandbox_booking_amended", reservation_no=booking.reservation_no, changes=req.changes)
        return 200, {"status": "Success", "message": "Booking amended."}

    # -- creation and the approval lifecycle ---------------------------------------------------

    def _new_booking(self, req: CreateIn, scenarios: frozenset[Scenario]) -> Answer:
        vehicle = fleet.FLEET_BY_ID.get(req.vehicle_id)
        if vehicle is None:
            return error(422, f"Unknown vehicle_id {req.vehicle_id!r}")
        trip = req.trip
        origin = trip.origin.model_dump(exclude_none=True)
        destination = trip.destination.model_dump(exclude_none=True)
        distance = fleet.distance_km(origin, destination)
        if distance is None:
            return error(422, "Unknown location: the airport code is not known to this partner")
        total = vehicle.fare(distance, self.config.currency)
        booked_extras = []
        for item in req.extras or []:
            extra = fleet.EXTRAS_BY_ID.get(item.id)
            if extra is None:
                return error(422, f"Unknown extra id {item.id!r}")
            quantity = item.quantity or 1
            total += extra.charge(quantity)
            booked_extras.append(
                {
                    "id": extra.id,
                    "name": extra.name,
                    "quantity": quantity,
                    "price": fleet.price_text(extra.charge(quantity), self.config.currency),
                }
            )
        if req.price is not None and (req.price.total != total or req.price.currency != self.config.currency):
            log.warning(
                "sandbox_price_mismatch",
                reservation_no=req.reservation_no,
                ours=fleet.price_text(total, self.config.currency),
                theirs=str(req.price.total),
                currency=req.price.currency,
            )
        details = {
            "vehicle": vehicle.summary(),
            "from": origin,
            "to": destination,
            "date": trip.date.isoformat(),
            "passengers": {
                "adult": trip.passengers.adult,
                "children": trip.passengers.children or 0,
                "infant": trip.passengers.infant or 0,
            },
            "suitcase": trip.suitcase,
            "small_bags": trip.small_bags,
            "flight_number": req.flight_info.flight_number,
            # docs/rules/return-trips.md#create: each leg is a booking of its own; the trip only ties them
            "trip": {"id": trip.id, "leg": trip.leg},
            "extras": booked_extras,
            "price": {"total": fleet.price_text(total, self.config.currency), "currency": self.config.currency},
            "distance_km": distance,
        }
        decline = None
        if Scenario.DECLINE in scenarios:
            decline = "No vehicle available"
        elif trip.passengers.party > vehicle.passengers:
            decline = "The vehicle does not seat the whole party"
        elif trip.suitcase > vehicle.suitcases or trip.small_bags > vehicle.small_bags:
            decline = "Not enough luggage space in this vehicle"
        now = self.now()
        delay = self.config.approve_after_seconds
        if Scenario.SLOW_APPROVE in scenarios:
            delay *= SLOW_APPROVE_FACTOR
        booking = Booking(
            reservation_no=req.reservation_no,
            partner_reference=None if decline else _partner_reference(),
            created_at=now,
            approve_at=now + delay,
            details=details,
            driver=driver_for(req.reservation_no),
            meeting_point=meeting_point(origin),
            declined=decline is not None,
            no_show=Scenario.NO_SHOW in scenarios,
            no_amend=Scenario.NO_AMEND in scenarios,
            partner_cancel_at=now + delay + self.config.approve_after_seconds
            if Scenario.PARTNER_CANCEL in scenarios
            else None,
        )
        if decline:
            booking.first_answer = {"status": "DECLINED", "message": decline}
        else:
            booking.first_answer = self._create_answer(booking, now)
        self.ledger.record(booking)
        log.info(
            "sandbox_booking_created",
            reservation_no=booking.reservation_no,
            partner_reference=booking.partner_reference,
            status=booking.first_answer["status"],
            scenarios=sorted(s.value for s in scenarios),
        )
        if Scenario.RIDE in scenarios:
            booking.ride = "RIDE"
        elif Scenario.CUSTOMER_NO_SHOW in scenarios:
            booking.ride = "NOSHOW"
        if not decline and (booking.first_answer["status"] == "PENDING" or booking.partner_cancel_at or booking.ride):
            self._start_lifecycle(booking)
        return 200, booking.first_answer

    @staticmethod
    def _create_answer(booking: Booking, now: float) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "reservation_no": booking.partner_reference,
            "status": "PENDING",
            "booking_details": booking.details,
        }
        if booking.status(now) == "APPROVED":  # approve_after_seconds == 0: approved on the spot
            answer.update(status="APPROVED", driver_info=booking.driver, meeting_point=booking.meeting_point)
        return answer

    def _start_lifecycle(self, booking: Booking) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._lifecycle(booking))
        self._tasks[booking.reservation_no] = task
        task.add_done_callback(lambda t: self._forget(booking.reservation_no, t))

    def _forget(self, reservation_no: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(reservation_no) is task:
            del self._tasks[reservation_no]

    async def _sleep_until(self, when: float) -> None:
        await asyncio.sleep(max(0.0, when - self.now()))

    async def _lifecycle(self, booking: Booking) -> None:
        try:
            await self._sleep_until(booking.approve_at)
            if booking.cancelled_at is not None:
                return
            if booking.first_answer.get("status") == "PENDING":
                await self.reverse.update(approval_body(booking))
                if booking.partner_cancel_at is not None:  # one approval delay after the approval was sent,
                    # even when a busy machine sent it late (docs/rules/sandbox.md: PARTNERCANCEL)
                    booking.partner_cancel_at = max(
                        booking.partner_cancel_at, self.now() + self.config.approve_after_seconds
                    )
            if booking.ride is not None:  # RIDE / NOSHOW: the driver's events and positions
                await ride.play(self.reverse, booking.reservation_no, booking.details, no_show=booking.ride == "NOSHOW")
            if booking.partner_cancel_at is not None:
                await self._sleep_until(booking.partner_cancel_at)
                if booking.cancelled_at is None:
                    booking.cancel_reason = PARTNER_CANCEL_REASON
                    await self.reverse.update(
                        {
                            "reservation_no": booking.reservation_no,
                            "status": "CANCELLED",
                            "cancel_reason": PARTNER_CANCEL_REASON,
                        }
                    )
        except Exception:  # a bug here must not kill the event loop's other tasks silently
            log.exception("sandbox_lifecycle_failed", reservation_no=booking.reservation_no)

    async def aclose(self) -> None:
        """Cancel pending approvals and close the HTTP client (the host app calls this when mounted)."""
        self._closed = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.reverse.aclose()

    # -- what tests and operators may read -----------------------------------------------------

    def effective_creates(self, reservation_no: str) -> int:
        return self.ledger.effective_creates.get(reservation_no, 0)

    def create_attempts(self, reservation_no: str) -> int:
        return self.ledger.create_attempts.get(reservation_no, 0)

    @property
    def pending_lifecycles(self) -> int:
        return len(self._tasks)


def approval_body(booking: Booking) -> dict[str, Any]:
    """The reverse-API call that approves a booking (PARTNER_API.md, "Update booking status")."""
    return {
        "reservation_no": booking.reservation_no,
        "status": "APPROVED",
        "driver_info": dict(booking.driver),
        "meeting_point": booking.meeting_point,
    }
