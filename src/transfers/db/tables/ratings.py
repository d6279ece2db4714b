"""Ratings (docs/rules/ratings.md; migration 0029): the traveller's stars and comment on a ride.

One row per booking (the primary key: two ratings sent at once record one, the other answers
``RATING_EXISTS``). ``partner_id`` is the partner that drove, copied at the rating so the scorecards
read ratings per partner without a join; ``source`` says who passed it on: ``traveller`` (the rating page)
or ``client`` (the agency, ``POST /booking/rating``).
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, SmallInteger, String, Table, Text

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

ratings = Table(
    "ratings",
    metadata,
    Column("booking_id", PK, ForeignKey("bookings.id"), primary_key=True),
    Column("partner_id", PK, ForeignKey("partners.id"), nullable=False),
    Column("stars", SmallInteger, nullable=False),
    Column("comment", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("source", String(16), nullable=False),
    CheckConstraint("stars BETWEEN 1 AND 5", name="stars"),
    CheckConstraint("source IN ('traveller', 'client')", name="source"),
)
# The scorecards' read: a partner's ratings in a window.
ratings_partner_created = Index("ix_ratings_partner_created", ratings.c.partner_id, ratings.c.created_at)
