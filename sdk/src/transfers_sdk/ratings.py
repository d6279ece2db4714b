"""Ratings (docs/rules/ratings.md): passing on the traveller's stars and comment, typed, and the call.

A rating is not idempotent by key: a retry after a lost answer is answered 409 ``RATING_EXISTS``
(raised as ``InvalidRequest``), which says the first one was recorded. The traveller can also rate on
the booking's ``ride.rating_url``; either way a booking has one rating.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from transfers_sdk._calls import API, Call
from transfers_sdk.models import _instant as _when

RATING = f"{API}/booking/rating"


@dataclass(frozen=True)
class Rating:
    reservation_no: str
    stars: int  # 1..5
    comment: str | None  # trimmed; None when none
    created_at: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rating:
        comment = data.get("comment")
        return cls(
            str(data["reservation_no"]),
            int(data["stars"]),
            None if comment is None else str(comment),
            _when(data["created_at"]),
        )


def rate_ride(reservation_no: str, stars: int, comment: str | None = None) -> Call[Rating]:
    body = json.dumps({"stars": stars, "comment": comment}).encode()
    return Call("POST", RATING, Rating.from_json, params=(("reservation_no", reservation_no),), body=body)
