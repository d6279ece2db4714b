"""A client's reads of its own bookings: one booking by its number (``client_booking``) and the list,
newest first, one page at a time (``list_bookings``, its filter and cursor).

``client_booking``: the client's own booking named by a ``reservation_no`` query parameter, as the
endpoints that change or price one (cancel, cancellation quote, amend) resolve it before doing
anything else. One place so the rule cannot drift between them: a missing number is the endpoint's
"required" code, and a number that cannot exist, does not exist or belongs to another client is its
"not found" code alike (a foreign booking answers byte-identically to a missing one, so numbers
cannot be probed). The read is outside any write transaction; callers lock the row themselves before
a change (``lifecycle.lock_booking``).

The list (beyond the original booking API: an integrator's list):

Order is ``created_at DESC, id DESC``, a total order, and pages are cut by keyset, never by
OFFSET: the cursor names the last booking a page showed and the next page starts strictly after
it. So paging is stable while bookings are being created (new ones sort before the first page,
never into the middle), no booking is shown twice or skipped, and every page is one range scan of
``ix_bookings_client_created (client_id, created_at, id)``.

The cursor is opaque to callers: base64url of the last ``(created_at, id)`` with an HMAC tag
(keyed by the deployment's secret and bound to the client), so an edited, truncated or foreign
cursor is refused with ``INVALID_CURSOR`` rather than silently starting somewhere else.

Filters (all optional, combined with AND): ``status`` (one or more BookingStatus values, given as
repeated parameters and/or comma-separated), ``pickup_from``/``pickup_to`` and
``created_from``/``created_to`` (ISO 8601 date-times with an offset; ``from`` inclusive, ``to``
exclusive), ``limit`` 1..100 (default 20). A bad filter is ``INVALID_FILTER`` (an empty value is a bad
value, as the published schema says).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.sql.elements import ColumnElement

from transfers import paging
from transfers.bookings import repository as repo
from transfers.bookings.models import Booking
from transfers.bookings.reservation import could_exist
from transfers.bookings.resource import booking_resource
from transfers.bookings.state import BookingStatus
from transfers.clients.models import ClientPrincipal
from transfers.db.tables import bookings
from transfers.errors import Code, ErrorCode, Invalid, NotFound
from transfers.paging import DEFAULT_LIMIT, invalid_filter, parse_instant, parse_limit
from transfers.services import Services

_CURSOR_VERSION = "1"


def invalid_cursor() -> Invalid:
    return Invalid(ErrorCode.INVALID_CURSOR)


@dataclass(frozen=True)
class Position:
    """The last booking of a page: the next page starts strictly after it."""

    created_at: datetime
    booking_id: int


@dataclass(frozen=True)
class BookingFilter:
    statuses: frozenset[BookingStatus] = frozenset()
    pickup_from: datetime | None = None
    pickup_to: datetime | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    limit: int = DEFAULT_LIMIT
    after: Position | None = None
    trip_id: str | None = None  # docs/rules/return-trips.md#legs: both legs of one return trip


# ---- parsing the query ----------------------------------------------------------------------------


def parse_statuses(values: Sequence[str]) -> frozenset[BookingStatus]:
    found: set[BookingStatus] = set()
    for value in values:
        for name in value.split(","):
            try:
                found.add(BookingStatus(name))
            except ValueError:
                allowed = ", ".join(s.value for s in BookingStatus)
                raise invalid_filter(f"status {name[:40]!r} is not a booking status ({allowed}).") from None
    return frozenset(found)


def parse_filter(
    svc: Services,
    client: ClientPrincipal,
    *,
    statuses: Sequence[str],
    pickup_from: str | None,
    pickup_to: str | None,
    created_from: str | None,
    created_to: str | None,
    limit: str | None,
    cursor: str | None,
    trip_id: str | None = None,
) -> BookingFilter:
    """The query parameters as a filter, checked in the order they are documented."""
    wanted = parse_statuses(statuses)
    pickup = _range("pickup_from", pickup_from, "pickup_to", pickup_to)
    created = _range("created_from", created_from, "created_to", created_to)
    size = parse_limit(limit)
    after = decode_cursor(svc, client, cursor) if cursor is not None else None
    if trip_id is not None and (not trip_id or len(trip_id) > 32 or "\x00" in trip_id):
        raise invalid_filter("trip_id must be a trip's id, e.g. TR-7K3M9Q2XAB (the BookingResource's trip.id).")
    return BookingFilter(
        statuses=wanted,
        pickup_from=pickup[0],
        pickup_to=pickup[1],
        created_from=created[0],
        created_to=created[1],
        limit=size,
        after=after,
        trip_id=trip_id,
    )


def _range(low_name: str, low: str | None, high_name: str, high: str | None) -> tuple[datetime | None, datetime | None]:
    low_at, high_at = parse_instant(low_name, low), parse_instant(high_name, high)
    if low_at is not None and high_at is not None and low_at > high_at:
        raise invalid_filter(f"{low_name} is later than {high_name}.")
    return low_at, high_at


# ---- the cursor -----------------------------------------------------------------------------------


def _cursor_key(svc: Services) -> bytes:
    return svc.box.derive("booking-list-cursor")


def encode_cursor(svc: Services, client: ClientPrincipal, position: Position) -> str:
    payload = f"{_CURSOR_VERSION}|{position.created_at.astimezone(UTC).isoformat()}|{position.booking_id}"
    return paging.seal(_cursor_key(svc), client.client_id, payload)


def decode_cursor(svc: Services, client: ClientPrincipal, cursor: str) -> Position:
    payload = paging.unseal(_cursor_key(svc), client.client_id, cursor)
    if payload is None:
        raise invalid_cursor()
    version, _, rest = payload.partition("|")
    created_text, _, id_text = rest.partition("|")
    if version != _CURSOR_VERSION or not id_text.isdigit():
        raise invalid_cursor()
    try:
        created_at = datetime.fromisoformat(created_text)
    except ValueError:
        raise invalid_cursor() from None
    if created_at.tzinfo is None:
        raise invalid_cursor()
    return Position(created_at.astimezone(UTC), int(id_text))


# ---- the query ------------------------------------------------------------------------------------


def _conditions(client_id: int, wanted: BookingFilter) -> list[ColumnElement[bool]]:
    b = bookings.c
    where: list[ColumnElement[bool]] = [b.client_id == client_id]
    if wanted.statuses:
        where.append(b.status.in_(sorted(s.value for s in wanted.statuses)))
    if wanted.pickup_from is not None:
        where.append(b.pickup_at >= wanted.pickup_from)
    if wanted.pickup_to is not None:
        where.append(b.pickup_at < wanted.pickup_to)
    if wanted.created_from is not None:
        where.append(b.created_at >= wanted.created_from)
    if wanted.created_to is not None:
        where.append(b.created_at < wanted.created_to)
    if wanted.trip_id is not None:
        where.append(b.trip_id == wanted.trip_id)
    if wanted.after is not None:
        # (created_at, id) < (cursor.created_at, cursor.id), spelled so both databases range-scan
        # the index on created_at and only break ties on id.
        at, last_id = wanted.after.created_at, wanted.after.booking_id
        where.append(and_(b.created_at <= at, or_(b.created_at < at, b.id < last_id)))
    return where


async def list_bookings(svc: Services, client: ClientPrincipal, wanted: BookingFilter) -> dict[str, Any]:
    """``{"data": [BookingResource, ...], "next_cursor": str | None}``; only the caller's bookings."""
    query = (
        select(bookings)
        .where(*_conditions(client.client_id, wanted))
        .order_by(bookings.c.created_at.desc(), bookings.c.id.desc())
        .limit(wanted.limit + 1)  # one more than the page says whether another page exists
    )
    async with svc.db.read() as conn:
        rows = [Booking.from_row(row) for row in (await conn.execute(query)).mappings()]
    page, more = rows[: wanted.limit], len(rows) > wanted.limit
    now = svc.clock.now()
    next_cursor = None
    if more:
        last = page[-1]
        next_cursor = encode_cursor(svc, client, Position(last.created_at, last.id))
    return {"data": [booking_resource(row, now) for row in page], "next_cursor": next_cursor}


async def client_booking(
    svc: Services, client: ClientPrincipal, reservation_no: str | None, *, required: Code, not_found: Code
) -> Booking:
    """The client's own booking ``reservation_no`` (see the module's docstring for the codes)."""
    if not reservation_no:
        raise Invalid(required)
    if not could_exist(reservation_no):
        raise NotFound(not_found)
    async with svc.db.read() as conn:
        booking = await repo.get_for_client(conn, client.client_id, reservation_no)
    if booking is None:
        raise NotFound(not_found)
    return booking


async def booking_to_act_on(svc: Services, client: ClientPrincipal, reservation_no: str | None) -> Booking:
    """The client's own booking for an action on it (cancel, incidents, rating): they all answer 1200 and
    1201 as the cancel does, so the codes live here once."""
    return await client_booking(
        svc,
        client,
        reservation_no,
        required=Code.CANCELLATION_RESERVATION_REQUIRED,
        not_found=Code.CANCELLATION_RESERVATION_NOT_FOUND,
    )
