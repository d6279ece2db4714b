"""The pages' statements: a booking by its tracking token (the traveller's page, one indexed read by the
direct path: it is the page's whole database cost, bench/bench_tracking_page.py) and the driver links."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.bookings.tracking_link import new_token
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import bookings, clients, driver_links
from transfers.db.tables.messages import client_message_settings

# The agency's support phone and default language ride along (docs/rules/ride.md#tracking-page,
# docs/rules/messages.md#page-language): still one indexed read (the settings by their primary key).
_BY_TRACKING_TOKEN = DirectStatement(
    select(
        bookings,
        clients.c.support_phone.label("client_support_phone"),
        client_message_settings.c.default_language.label("client_default_language"),
    )
    .select_from(
        bookings.join(clients, clients.c.id == bookings.c.client_id).outerjoin(
            client_message_settings, client_message_settings.c.client_id == bookings.c.client_id
        )
    )
    .where(bookings.c.tracking_token == bindparam("token"))
)
_BY_DRIVER_TOKEN = DirectStatement(
    select(bookings, driver_links.c.revoked_at.label("link_revoked_at"))
    .select_from(bookings.join(driver_links, driver_links.c.booking_id == bookings.c.id))
    .where(driver_links.c.token == bindparam("token"))
)


@dataclass(frozen=True, slots=True)
class TravellerBooking:
    """A traveller's token's booking, with what its agency set for the page: the support phone and the
    default language (None when it set none)."""

    booking: Booking
    support_phone: str | None
    default_language: str | None


async def booking_by_tracking_token(db: Database, token: str) -> TravellerBooking | None:
    """The booking of a traveller's token, its agency's support phone and default language."""
    row = await db.read_one(_BY_TRACKING_TOKEN, token=token)
    if row is None:
        return None
    return TravellerBooking(Booking.from_row(row), row["client_support_phone"], row["client_default_language"])


@dataclass(frozen=True, slots=True)
class DriverLink:
    """A booking's driver link (docs/rules/ride.md#driver-page)."""

    token: str
    created_at: datetime
    created_by: str
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


async def booking_by_driver_token(db: Database, token: str) -> tuple[Booking, bool] | None:
    """The booking a driver link opens and whether the link is revoked; None for no such link."""
    row = await db.read_one(_BY_DRIVER_TOKEN, token=token)
    if row is None:
        return None
    return Booking.from_row(row), row["link_revoked_at"] is not None


async def driver_link(conn: AsyncConnection, booking_id: int) -> DriverLink | None:
    row = (await conn.execute(select(driver_links).where(driver_links.c.booking_id == booking_id))).mappings().first()
    return None if row is None else _link(row)


async def issue_driver_link(conn: AsyncConnection, booking_id: int, *, actor: str, now: datetime) -> DriverLink:
    """The booking's active link, issued if it has none: a revoked one is replaced by a new token (its
    old URL stays dead). Safe when two dispatchers press at once: ``INSERT ... ON CONFLICT DO NOTHING``
    on the booking's key, then whichever link won is the answer."""
    dialect: Any = postgresql if conn.dialect.name == "postgresql" else sqlite
    values = {"booking_id": booking_id, "token": new_token(), "created_at": now, "created_by": actor}
    await conn.execute(dialect.insert(driver_links).values(**values).on_conflict_do_nothing())
    await conn.execute(
        update(driver_links)
        .where(driver_links.c.booking_id == booking_id, driver_links.c.revoked_at.is_not(None))
        .values(token=new_token(), created_at=now, created_by=actor, revoked_at=None)
    )
    link = await driver_link(conn, booking_id)
    if link is None:  # inserted or kept above, in this transaction: only a broken database gets here
        raise RuntimeError(f"driver link of booking {booking_id} missing right after it was written")
    return link


async def revoke_driver_link(conn: AsyncConnection, booking_id: int, *, now: datetime) -> bool:
    """Revoke the booking's active link; False when it had none (nothing changed)."""
    result = await conn.execute(
        update(driver_links)
        .where(driver_links.c.booking_id == booking_id, driver_links.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return bool(result.rowcount == 1)


async def take_position_turn(db: Database, token: str, now: datetime, every: timedelta) -> bool:
    """Whether the link may record a position now: True (and ``now`` noted as its last) when none was
    taken within ``every``. One conditional UPDATE, so two processes (or two parallel posts) cannot both
    take the same turn."""
    async with db.write() as conn:
        result = await conn.execute(
            update(driver_links)
            .where(
                driver_links.c.token == token,
                or_(driver_links.c.last_position_at.is_(None), driver_links.c.last_position_at <= now - every),
            )
            .values(last_position_at=now)
        )
    return int(result.rowcount) > 0


def _link(row: Any) -> DriverLink:
    return DriverLink(row["token"], row["created_at"], row["created_by"], row["revoked_at"])
