"""Which messages to the traveller one client event calls for (docs/rules/messages.md#templates). Pure:
the event, the booking's facts and the client's settings in; the rows to write out (each ``scheduled``,
or already ``skipped`` / ``suppressed`` / ``expired`` with its reason, so what was not sent is seen).

The scheduled passes (``planner.py`` for events, ``reminders.py`` for the 24 h reminder) gather the
facts and write what this returns; the unique dedupe key makes writing the same plan twice harmless.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from transfers.messages import timing

# The templates and their channels (docs/rules/messages.md#templates).
CHANNELS: Mapping[str, tuple[str, ...]] = {
    "confirmed": ("email",),
    "reminder": ("email", "sms"),
    "driver_changed": ("email", "sms"),
    "pickup_moved": ("email", "sms"),
    "driver_arrived": ("sms",),
    "cancelled": ("email", "sms"),
    "feedback": ("email",),
}
# The templates that expire at the pickup: their waiting messages follow a pickup that moves.
AT_PICKUP = tuple(t for t in CHANNELS if timing.expires_at_pickup(t))
# A failure of these is news the traveller may be waiting for: the client hears of it
# (``booking.message_failed``, docs/rules/messages.md#sending).
FAILURE_REPORTED = frozenset({"driver_changed", "pickup_moved", "driver_arrived", "cancelled"})

STATUS_CHANGED = "booking.status_changed"
DRIVER_UPDATED = "booking.driver_updated"
PICKUP_MOVED = "booking.pickup_time_changed"
DRIVER_EVENT = "booking.driver_event"
ARRIVED = "DRIVER_ARRIVED_AT_PICKUP"
DROPPED_OFF = "DRIVER_ARRIVED_AT_DROPOFF"
APPROVED = "APPROVED"
# CANCELLED tells the traveller only when the partner or an operator cancelled (the client knows its own).
CANCELLED_BY_OTHERS = frozenset({"partner", "operator"})
ENDED_BY_PARTNER = frozenset({"DECLINED", "FAILED"})
# The events that may call for a message: the planner reads no others.
EVENT_TYPES = (STATUS_CHANGED, DRIVER_UPDATED, PICKUP_MOVED, DRIVER_EVENT)


@dataclass(frozen=True, slots=True)
class Event:
    """A client event as the planner reads it. ``pickup_at`` and the driver are the booking's as of the
    event (its snapshot), None when the event carries none (then the booking's current ones count)."""

    pk: int
    type: str
    created_at: datetime
    status: str | None = None
    previous_status: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    pickup_at: datetime | None = None
    driver_name: str | None = None
    driver_plate: str | None = None


@dataclass(frozen=True, slots=True)
class BookingFacts:
    """What planning reads of the booking as it is now. ``approved_at``: when it first became APPROVED
    (None: never). ``channels_off``: the channels its create switched off. ``tz``: the pickup airport's
    time zone (None when the airport has none)."""

    id: int
    client_id: int
    pickup_at: datetime
    created_at: datetime
    tz: ZoneInfo | None
    email: str | None
    phone: str | None
    language: str
    approved_at: datetime | None = None
    cancelled_by: str | None = None
    status: str | None = None
    driver_name: str | None = None
    driver_plate: str | None = None
    channels_off: frozenset[str] = frozenset()
    sms_statuses: tuple[str, ...] = ()  # the statuses of its SMS messages already written


@dataclass(frozen=True, slots=True)
class Settings:
    """The client's message settings as planning needs them (docs/rules/messages.md#settings)."""

    channels: frozenset[str]
    feedback: bool = False


@dataclass(frozen=True, slots=True)
class Planned:
    """One ``traveller_messages`` row to write."""

    booking_id: int
    client_id: int
    template: str
    channel: str
    to_address: str
    language: str
    revision: str
    dedupe_key: str
    scheduled_for: datetime
    expires_at: datetime
    status: str = "scheduled"
    reason: str | None = None


def templates_for(event: Event, booking: BookingFacts, settings: Settings) -> list[str]:
    """The templates ``event`` triggers (none, mostly)."""
    approved = booking.approved_at
    if event.type == STATUS_CHANGED:
        if event.status == APPROVED and event.previous_status != APPROVED:
            return ["confirmed"]
        was_approved = event.previous_status == APPROVED or (approved is not None and approved <= event.created_at)
        if not was_approved:
            return []
        if event.status == "CANCELLED" and booking.cancelled_by in CANCELLED_BY_OTHERS:
            return ["cancelled"]
        if event.status in ENDED_BY_PARTNER:
            return ["cancelled"]
        return []
    if event.type == DRIVER_UPDATED:
        # After the first approval only: the driver the approval names is in ``confirmed`` (both events of
        # one change carry the same instant, so "strictly after" leaves the approval's own out).
        return ["driver_changed"] if approved is not None and event.created_at > approved else []
    if event.type == PICKUP_MOVED:
        return ["pickup_moved"] if approved is not None and event.created_at >= approved else []
    if event.type == DRIVER_EVENT:
        kind = _driver_event(event).get("type")
        if kind == ARRIVED:
            return ["driver_arrived"]
        if kind == DROPPED_OFF and settings.feedback:
            return ["feedback"]
    return []


def plan_event(
    event: Event,
    booking: BookingFacts,
    settings: Settings,
    *,
    now: datetime,
    stopped: Collection[tuple[str, str]] = (),
) -> list[Planned]:
    """The messages ``event`` calls for, given the booking now and the client's settings. ``stopped``:
    the (channel, address) pairs opted out for this booking (e-mail addresses lowercased).

    A move or a driver the booking has since left behind is not news: only the latest is planned (the
    event's pickup or driver against the booking's current one)."""
    planned: list[Planned] = []
    for template in templates_for(event, booking, settings):
        event_at, pickup_at = event.created_at, booking.pickup_at
        if template == "pickup_moved" and not _latest_move(event, booking):
            continue
        if template == "driver_changed" and not _latest_driver(event, booking):
            continue
        if template in ("driver_arrived", "feedback"):
            event_at = _occurred_at(event)
        planned += plan_template(
            template,
            booking,
            settings,
            now=now,
            due=timing.due_at(template, event_at=event_at, pickup_at=pickup_at, tz=booking.tz),
            expires=timing.expires_at(template, event_at=event_at, pickup_at=pickup_at),
            stopped=stopped,
            sms_before=sum(1 for p in planned if p.channel == "sms" and p.status == "scheduled"),
        )
    return planned


def plan_reminder(
    booking: BookingFacts, settings: Settings, *, now: datetime, stopped: Collection[tuple[str, str]] = ()
) -> list[Planned]:
    """The 24 h reminder of an APPROVED booking (none for a booking made within 24 h of its pickup)."""
    if not timing.reminder_wanted(created_at=booking.created_at, pickup_at=booking.pickup_at):
        return []
    return plan_template(
        "reminder",
        booking,
        settings,
        now=now,
        due=timing.reminder_due(booking.pickup_at, booking.tz),
        expires=booking.pickup_at,
        stopped=stopped,
    )


def plan_template(
    template: str,
    booking: BookingFacts,
    settings: Settings,
    *,
    now: datetime,
    due: datetime,
    expires: datetime,
    stopped: Collection[tuple[str, str]] = (),
    sms_before: int = 0,
) -> list[Planned]:
    """One row per channel of ``template`` the client enabled (``feedback``: when its switch is on),
    each with its status: ``scheduled``, or ``skipped`` (``channel_off``: the booking switched the
    channel off; ``no_address``; ``sms_limit``), ``suppressed`` (``opted_out``) or ``expired``."""
    revision = timing.revision(
        template, pickup_at=booking.pickup_at, driver_name=booking.driver_name, driver_plate=booking.driver_plate
    )
    rows: list[Planned] = []
    sms_planned = sms_before
    for channel in CHANNELS[template]:
        if template == "feedback":
            if not settings.feedback:
                continue
        elif channel not in settings.channels:
            continue
        address = (booking.email if channel == "email" else booking.phone) or ""
        address = address.strip()
        status, reason = "scheduled", None
        if channel in booking.channels_off:
            status, reason = "skipped", "channel_off"
        elif not address:
            status, reason = "skipped", "no_address"
        elif (channel, address.lower() if channel == "email" else address) in stopped:
            status, reason = "suppressed", "opted_out"
        elif expires <= max(now, due):
            status, reason = "expired", None
        elif channel == "sms":
            if timing.sms_over_limit(booking.sms_statuses, sms_planned):
                status, reason = "skipped", "sms_limit"
            else:
                sms_planned += 1
        rows.append(
            Planned(
                booking_id=booking.id,
                client_id=booking.client_id,
                template=template,
                channel=channel,
                to_address=address,
                language=booking.language,
                revision=revision,
                dedupe_key=timing.dedupe_key(booking.id, template, channel, revision),
                scheduled_for=due,
                expires_at=expires,
                status=status,
                reason=reason,
            )
        )
    return rows


def _latest_move(event: Event, booking: BookingFacts) -> bool:
    """The move the event reports is where the pickup is now (a later move makes it old news)."""
    return event.pickup_at is None or event.pickup_at == booking.pickup_at


def _latest_driver(event: Event, booking: BookingFacts) -> bool:
    """The booking has a driver and the event's (when it names one) is still the booking's."""
    if not booking.driver_name:
        return False
    named = (event.driver_name, event.driver_plate)
    return named == (None, None) or named == (booking.driver_name, booking.driver_plate)


def _driver_event(event: Event) -> Mapping[str, Any]:
    found = event.data.get("event") if isinstance(event.data, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _occurred_at(event: Event) -> datetime:
    """The driver event's own ``occurred_at`` (the client event's time when it carries none readable)."""
    text = _driver_event(event).get("occurred_at")
    if isinstance(text, str):
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return event.created_at
        if parsed.tzinfo is not None:
            return parsed
    return event.created_at
