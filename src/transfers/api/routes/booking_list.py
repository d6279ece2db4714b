"""GET /api/v1/booking-api/bookings: the caller's bookings, newest first (beyond the original booking API)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers import paging
from transfers.api import schemas
from transfers.api.deps import current_client, services
from transfers.api.openapi import register_query_types
from transfers.api.responses import JSONBody
from transfers.bookings import client_queries
from transfers.bookings.state import BookingStatus
from transfers.clients.models import ClientPrincipal

router = APIRouter(prefix="/api/v1/booking-api", tags=["Booking API"])

_DATE_TIME = {"type": "string", "format": "date-time"}
_STATUS = "|".join(s.value for s in BookingStatus)
register_query_types(
    "list_bookings",
    {
        "status": {
            "type": "array",
            "items": {
                "type": "string",
                "pattern": f"^({_STATUS})(,({_STATUS}))*$",
                "description": "a BookingStatus, or several separated by commas",
                "examples": ["APPROVED,CANCELLED"],
            },
        },
        "pickup_from": _DATE_TIME,
        "trip_id": {"type": "string", "minLength": 1, "maxLength": 32, "examples": ["TR-7K3M9Q2XAB"]},
        "pickup_to": _DATE_TIME,
        "created_from": _DATE_TIME,
        "created_to": _DATE_TIME,
        "limit": {"type": "integer", "minimum": 1, "maximum": paging.MAX_LIMIT, "default": paging.DEFAULT_LIMIT},
        "cursor": {"type": "string", "maxLength": paging.MAX_CURSOR_CHARS},
    },
)

DESCRIPTION = """\
**Beyond the original booking API**: the specification has no list operation; this one is offered for integrators
and may evolve within `/api/v1` only by additions.

The caller's own bookings, newest first (`created_at` descending, then the booking's internal
order), `limit` per page. Pass `next_cursor` back as `cursor` (with the same filters) for the next
page; `next_cursor` is null on the last page. Paging is by cursor, so it stays stable while
bookings are created: nothing is shown twice or skipped.

Filters combine with AND: `status` (repeat it or separate values with commas), `pickup_from` /
`pickup_to` and `created_from` / `created_to` (ISO 8601 date-times with an offset; `from`
inclusive, `to` exclusive), `trip_id` (a return trip's `trip.id`: both its legs). A bad filter
answers 422 `INVALID_FILTER`, a cursor this service did not issue to this client 422
`INVALID_CURSOR`, both in the string-code error shape.
"""


@router.get(
    "/bookings",
    summary="List your bookings (beyond the original booking API)",
    description=DESCRIPTION,
    response_model=schemas.BookingPage,
    responses=schemas.LIST_ERRORS,
    operation_id="list_bookings",
)
async def list_bookings(
    request: Request,
    status: list[str] | None = Query(default=None, description="BookingStatus values; repeat or comma-separate"),
    pickup_from: str | None = Query(default=None, description="pickup at or after (ISO 8601 with offset)"),
    pickup_to: str | None = Query(default=None, description="pickup before (ISO 8601 with offset)"),
    created_from: str | None = Query(default=None, description="created at or after (ISO 8601 with offset)"),
    created_to: str | None = Query(default=None, description="created before (ISO 8601 with offset)"),
    limit: str | None = Query(default=None, description="page size, 1 to 100 (default 20)"),
    cursor: str | None = Query(default=None, description="`next_cursor` of the previous page"),
    trip_id: str | None = Query(
        default=None, description="a return trip's id (`trip.id`): both its legs (docs/rules/return-trips.md#legs)"
    ),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    svc = services(request)
    wanted = client_queries.parse_filter(
        svc,
        client,
        statuses=status or [],
        pickup_from=pickup_from,
        pickup_to=pickup_to,
        created_from=created_from,
        created_to=created_to,
        limit=limit,
        cursor=cursor,
        trip_id=trip_id,
    )
    return JSONBody(await client_queries.list_bookings(svc, client, wanted))
