"""A stored rating (a row of ``ratings``), as the API and the page show it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Rating:
    booking_id: int
    partner_id: int
    stars: int
    comment: str | None
    created_at: datetime
    source: str

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> Rating:
        return cls(
            int(row["booking_id"]),
            int(row["partner_id"]),
            int(row["stars"]),
            row["comment"],
            row["created_at"],
            row["source"],
        )

    def resource(self, reservation_no: str) -> dict[str, Any]:
        """The answer of ``POST /booking/rating`` (docs/rules/ratings.md#api)."""
        return {
            "reservation_no": reservation_no,
            "stars": self.stars,
            "comment": self.comment,
            "created_at": self.created_at.isoformat(),
        }
