"""Pieces of the one-statement acknowledgement on PostgreSQL (``bookings/fast_paths.py``): the same
rows the general path writes through ``repository.py`` (``finish``, ``record_attempt``), as CTEs that
take part in one statement; ``tests/integration/test_fast_paths_equal.py`` compares them. (A status
change's outbox messages are rows of its ``messages`` side effect, ``bookings/effects.py``.)
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import CTE, ColumnElement, and_, bindparam, exists, insert, select, update

from transfers.db.tables import delivery_attempts, outbox
from transfers.delivery.models import DELIVERED, PENDING
from transfers.delivery.queue import Attempt


def held_by_caller() -> ColumnElement[bool]:
    """The message ``m_id`` is pending and still leased to the caller (``m_lease``)."""
    lease = bindparam("m_lease", type_=outbox.c.lease_until.type)
    return and_(outbox.c.id == bindparam("m_id"), outbox.c.status == PENDING, outbox.c.lease_until == lease)


def delivered_fragment(gate: CTE, now: ColumnElement[Any]) -> CTE:
    """The held message finished as delivered, if ``gate`` (a CTE) answered a row; it re-checks the
    lease under the message's row lock."""
    return (
        update(outbox)
        .where(held_by_caller(), exists(select(gate.c.id)))
        .values(status=DELIVERED, attempts=outbox.c.attempts + 1, finished_at=now, lease_until=None, last_error=None)
        .returning(outbox.c.id)
        .cte("f")
    )


ATTEMPT_BINDS = (
    ("m_id", "outbox_id"),
    ("a_no", "attempt_no"),
    ("a_started", "started_at"),
    ("a_ms", "duration_ms"),
    ("a_outcome", "outcome"),
    ("a_http", "http_status"),
    ("a_error", "error"),
    ("a_excerpt", "answer_excerpt"),
)


def attempt_fragment(gate: CTE) -> CTE:
    """The delivery attempt's row, if ``gate`` answered a row (binds: ``attempt_params``)."""
    return (
        insert(delivery_attempts)
        .from_select(
            [column for _, column in ATTEMPT_BINDS],
            select(
                *(bindparam(name, type_=delivery_attempts.c[column].type) for name, column in ATTEMPT_BINDS)
            ).select_from(gate),
        )
        .cte("a")
    )


def attempt_params(attempt: Attempt) -> dict[str, object]:
    return {
        "a_no": attempt["attempt_no"],
        "a_started": attempt["started_at"],
        "a_ms": int(attempt["duration_ms"]),
        "a_outcome": attempt["outcome"],
        "a_http": attempt["http_status"],
        "a_error": (attempt["error"] or "")[:1000] or None,
        "a_excerpt": attempt["answer_excerpt"],
    }
