"""A booking's whole story, as operators read it (``transfers bookings show`` and the console's
booking page): the row, its client's and partner's names, its ledger entries, its status changes,
its ride (the driver's events with who sent them, docs/rules/ride.md#sandbox-and-console) and its
partner deliveries with every attempt (the client's live positions are not among them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transfers.bookings import operator_queries
from transfers.bookings import repository as repo
from transfers.bookings.models import Booking, Transition
from transfers.db.engine import Database
from transfers.delivery import operators as outbox_views
from transfers.ride import repository as ride_repo
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import LedgerEntry


@dataclass
class BookingDetail:
    booking: Booking
    client_name: str | None
    partner_name: str | None
    ledger: list[LedgerEntry]
    transitions: list[Transition]
    deliveries: list[dict[str, Any]]  # outbox rows, each with "delivery_attempts"
    ride_events: list[ride_repo.RecordedEvent]  # by occurred_at, with who sent each


async def load_detail(db: Database, reservation_no: str) -> BookingDetail | None:
    """The story of ``reservation_no`` (tried as typed, then upper-case), None when there is none."""
    async with db.read() as conn:
        booking = await repo.get_by_reservation(conn, reservation_no)
        if booking is None and reservation_no.upper() != reservation_no:
            booking = await repo.get_by_reservation(conn, reservation_no.upper())
        if booking is None:
            return None
        deliveries = []
        for message in await outbox_views.for_booking(conn, booking.id):
            if message.kind.startswith("client."):  # a client's live position: not a partner delivery
                continue
            deliveries.append(
                {
                    **message.as_dict(),
                    "delivery_attempts": [a.as_dict() for a in await outbox_views.attempts_of(conn, message.id)],
                }
            )
        client_name, partner_name = await operator_queries.party_names(conn, booking.id)
        return BookingDetail(
            booking=booking,
            client_name=client_name,
            partner_name=partner_name,
            ledger=await wallet_repo.entries_for_booking(conn, booking.id),
            transitions=await repo.transitions_of(conn, booking.id),
            deliveries=deliveries,
            ride_events=await ride_repo.events_of(conn, booking.id),
        )
