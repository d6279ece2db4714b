"""The ``ratings`` table's statements (docs/rules/ratings.md)."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import ratings
from transfers.ratings.models import Rating


class DuplicateRating(Exception):
    """The primary key refused the row: another rating of the booking won the race."""


async def of_booking(conn: AsyncConnection, booking_id: int) -> Rating | None:
    row = (await conn.execute(select(ratings).where(ratings.c.booking_id == booking_id))).mappings().first()
    return None if row is None else Rating.from_row(row)


async def insert_rating(conn: AsyncConnection, rating: Rating) -> None:
    """Insert one rating; DuplicateRating when the booking has one (the caller's transaction is then
    unusable on PostgreSQL and must roll back)."""
    try:
        await conn.execute(
            insert(ratings).values(
                booking_id=rating.booking_id,
                partner_id=rating.partner_id,
                stars=rating.stars,
                comment=rating.comment,
                created_at=rating.created_at,
                source=rating.source,
            )
        )
    except IntegrityError as exc:
        raise DuplicateRating() from exc
