"""A booking's whole story, as operators read it (``transfers bookings show`` and the console's
booking page): the row, its client's and partner's names, its ledger entries, its status changes
and its partner deliveries with every attempt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transfers.bookings import queries
from transfers.bookings import repository as repo
from transfers.bookings.models import Booking, Transition
from transfers.db.engine import Database
from transfers.delivery import repository as outbox_repo
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


async def load_detail(db: Database, reservation_no: str) -> BookingDetail | None:
    """The story of ``reservation_no`` (tried as typed, then upper-case), None when there is none."""
    async with db.read() as conn:
        booking = await repo.get_by_reservation(conn, reservation_no)
        if booking is None and reservation_no.upper() != reservation_no:
            booking = await repo.get_by_reservation(conn, reservation_no.upper())
        if booking is None:
            return None
        deliveries = []
        for message in await outbox_repo.for_booking(conn, booking.id):
            deliveries.append(
                {**message.as_dict(), "delivery_attempts": await outbox_repo.attempts_of(conn, message.id)}
            )
        client_name, partner_name = await queries.party_names(conn, booking.id)
        return BookingDetail(
            booking=booking,
            client_name=client_name,
            partner_name=partner_name,
            ledger=await wallet_repo.entries_for_booking(conn, booking.id),
            transitions=await repo.transitions_of(conn, booking.id),
            deliveries=deliveries,
        )
