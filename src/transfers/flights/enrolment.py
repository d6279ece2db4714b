"""A booking's flight joins its watch (docs/rules/flights.md#watching, #booking-fields): when the booking
is created and when an amendment changes its flight number or pickup. These are the flight watch's
handlers of ``bookings/hooks.py``, registered at start-up by ``transfers/features.py``: the booking's use
cases never import the watch. Each runs in the transaction of the change it is given (``conn``), or, for
the single create, by statements of its own before the create's one-statement write."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.hooks import AfterCreate
from transfers.bookings.models import Booking
from transfers.flights import repository as repo
from transfers.flights.watch import answered_lately, check_new
from transfers.reference.flights import is_trackable
from transfers.services import Services


def watches(pickup: dict[str, Any], number: str | None) -> bool:
    """Whether a booking's flight is watched: an airport pickup and a trackable number."""
    return pickup.get("type") == "AIRPORT" and is_trackable(number)


async def enrol(conn: AsyncConnection, booking: Booking, now: datetime) -> int | None:
    """Join ``booking`` to the watch of its flight (created if needed, due now) and return its id; None when
    the booking is not watched (not an airport pickup, an untrackable number). Amending the flight number or
    the pickup enrols the booking again: the watch restarts (docs/rules/flights.md#booking-fields)."""
    if not watches(booking.pickup_location, booking.flight_number):
        return None
    scheduled = booking.original_pickup_at or booking.pickup_at
    return await repo.ensure_watch(conn, booking.flight_number, booking.airport_iata, scheduled, now)


async def on_new_booking(
    svc: Services, values: dict[str, Any], now: datetime, conn: AsyncConnection | None
) -> AfterCreate | None:
    """A new booking's ``flight_watch_id`` when its flight is watched, and its first check once stored.

    In a create's transaction (``conn``: a return trip's general path), the watch is taken there, due now.
    Without one (the single create, a return trip's one-statement pair), the watch is read first: a watch
    already due is taken as it is; a missing one is made (``repository.new_watch``); one due later is made
    due (``repository.make_due``), each by a statement of its own (the booking is written by one statement
    of its own, ``fast_paths.store_created``). No check at creation when the provider answered for this
    flight less than ``watch.CREATION_RECHECK`` ago (the worker's pass checks the newcomer: its watch is due)."""
    if not watches(values["pickup_location"], values["flight_number"]):
        return None
    number, iata, pickup = values["flight_number"], values["airport_iata"], values["pickup_at"]
    if conn is not None:
        values["flight_watch_id"] = await repo.ensure_watch(conn, number, iata, pickup, now)
        return functools.partial(start_check, svc)
    found = await repo.find_watch(svc.db, number, iata, pickup)
    if found is not None and found.due(now):
        values["flight_watch_id"] = found.id
    elif found is None:
        values["flight_watch_id"] = await repo.new_watch(svc.db, number, iata, pickup, now)
    else:
        await repo.make_due(svc.db, found.id, now)
        values["flight_watch_id"] = found.id
    if found is not None and answered_lately(found.checked_at, now):
        return None
    return functools.partial(start_check, svc)


def start_check(svc: Services, stored: Booking) -> None:
    """The first check of a new booking's flight, beside the create's answer (docs/rules/flights.md#watching):
    handed to ``Background.batch`` (the checks of the creates that come in together are made together),
    never in the answer's way. Only a PENDING_APPROVAL or APPROVED booking is checked: a declined or still
    pending one is not watched yet. The single create and each leg of a return trip alike."""
    if (
        svc.settings.flight_check_at_creation
        and stored.flight_watch_id is not None
        and stored.status.value in repo.WATCHED_STATUSES
    ):
        svc.background.batch("flight-check", stored.flight_watch_id, functools.partial(_check_new, svc))


async def _check_new(svc: Services, watch_ids: Sequence[int]) -> None:
    """The checks at creation of a batch of new bookings' flights (``Background.batch``)."""
    await check_new(svc.db, svc.clock, svc.settings, watch_ids)


async def on_amendment_applied(
    conn: AsyncConnection, booking: Booking, fields: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """An amended pickup is the new booked pickup, and an amended flight number or pickup restarts the flight
    watch (docs/rules/flights.md#booking-fields): the booking joins its new flight's watch, due now, in the
    amendment's transaction."""
    if "pickup_at" not in fields and "flight_number" not in fields:
        return {}
    restarted: dict[str, Any] = {"flight_state": None}
    if "pickup_at" in fields:
        restarted["original_pickup_at"] = fields["pickup_at"]
    restarted["flight_watch_id"] = await enrol(conn, booking.moved({**fields, **restarted}), now)
    return restarted
