"""When a message to a traveller goes, when it stops being worth sending, and what makes two messages
the same one (docs/rules/messages.md#timing). Pure: instants in, instants out (tz-aware, UTC).

* Quiet hours: ``confirmed`` and ``reminder`` due between 22:00 and 07:00 at the pickup airport wait
  until 07:00 there, unless 07:00 is later than 12 h before the pickup (then at once). The airport's
  time zone does the arithmetic (``zoneinfo``), so a night on which clocks change is as long as it is.
* Expiry per template: ``driver_arrived`` 30 min after the arrival occurred, ``pickup_moved`` at the
  new pickup, ``feedback`` 7 days after the drop-off (the rating window, docs/rules/ratings.md#window),
  the others at the pickup.
* Revision: what makes a second trigger of the same template new news (the new pickup for
  ``pickup_moved``, the driver for ``driver_changed``); the dedupe key is booking, template, channel
  and revision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

QUIET_FROM = time(22, 0)
QUIET_UNTIL = time(7, 0)
QUIET_LATEST = timedelta(hours=12)  # 07:00 later than this before pickup: send at once instead
QUIET_TEMPLATES = frozenset({"confirmed", "reminder"})
REMINDER_BEFORE = timedelta(hours=24)
DRIVER_CHANGE_DELAY = timedelta(minutes=2)
FEEDBACK_DELAY = timedelta(hours=1)
ARRIVED_EXPIRES = timedelta(minutes=30)
FEEDBACK_EXPIRES = timedelta(days=7)  # the rating page closes then (docs/rules/ratings.md#window)
SMS_LIMIT = 8
# Statuses of an SMS that count against the limit: it went, or will, or the provider had it.
SMS_COUNTED = frozenset({"scheduled", "sent", "delivered", "failed"})
FIRST = "1"  # the revision of a template that happens once per booking
# Templates whose expiry is their own, not the pickup: the arrival's 30 min, the rating's 7 days.
OWN_EXPIRY = frozenset({"driver_arrived", "feedback"})


def in_quiet_hours(instant: datetime, tz: ZoneInfo) -> bool:
    """Whether ``instant`` falls between 22:00 and 07:00 on the wall clock of ``tz``."""
    local = instant.astimezone(tz).time()
    return local >= QUIET_FROM or local < QUIET_UNTIL


def after_quiet_hours(due: datetime, tz: ZoneInfo | None, pickup_at: datetime) -> datetime:
    """``due`` moved out of the airport's night: to 07:00 there (the same night's end), unless that is
    later than 12 h before ``pickup_at``; ``due`` itself when it is daytime there (or the zone is
    unknown: an airport without a time zone gets no quiet hours rather than a guessed one)."""
    if tz is None or not in_quiet_hours(due, tz):
        return due
    local = due.astimezone(tz)
    morning = local.date() if local.time() < QUIET_UNTIL else local.date() + timedelta(days=1)
    # datetime.combine with the zone: 07:00 as the clock reads it that day, whatever the offset then
    seven = datetime.combine(morning, QUIET_UNTIL, tzinfo=tz).astimezone(UTC)
    if seven > pickup_at - QUIET_LATEST:
        return due
    return seven


def due_at(template: str, *, event_at: datetime, pickup_at: datetime, tz: ZoneInfo | None) -> datetime:
    """When a message planned from a trigger at ``event_at`` goes (``reminder``: its due time comes from
    the pickup, see ``reminder_due``)."""
    if template == "reminder":
        base = pickup_at - REMINDER_BEFORE
    elif template == "driver_changed":
        base = event_at + DRIVER_CHANGE_DELAY
    elif template == "feedback":
        base = event_at + FEEDBACK_DELAY
    else:
        base = event_at
    if template in QUIET_TEMPLATES:
        return after_quiet_hours(base, tz, pickup_at)
    return base


def reminder_wanted(*, created_at: datetime, pickup_at: datetime) -> bool:
    """A reminder only for a booking made more than 24 h before its pickup (a later one has just had
    its ``confirmed``)."""
    return pickup_at - created_at > REMINDER_BEFORE


def reminder_due(pickup_at: datetime, tz: ZoneInfo | None) -> datetime:
    """24 h before the pickup, out of the airport's night."""
    return after_quiet_hours(pickup_at - REMINDER_BEFORE, tz, pickup_at)


def expires_at(template: str, *, event_at: datetime, pickup_at: datetime) -> datetime:
    """After this instant the message is never sent (``expired``). ``event_at`` is the trigger's own
    time: the arrival's or the drop-off's ``occurred_at`` for ``driver_arrived`` and ``feedback``;
    ``pickup_at`` is the pickup as the trigger left it (the new one for ``pickup_moved``)."""
    if template == "driver_arrived":
        return event_at + ARRIVED_EXPIRES
    if template == "feedback":
        return event_at + FEEDBACK_EXPIRES
    return pickup_at


def expires_at_pickup(template: str) -> bool:
    """Whether ``template`` expires at the pickup (then a pickup moved later or earlier moves its
    expiry with it, docs/rules/messages.md#timing)."""
    return template not in OWN_EXPIRY


def pickup_revision(pickup_at: datetime) -> str:
    """``pickup_moved``'s revision: the new pickup, UTC, to the minute (``202611291430``)."""
    return pickup_at.astimezone(UTC).strftime("%Y%m%d%H%M")


def driver_revision(name: str | None, plate: str | None) -> str:
    """``driver_changed``'s revision: the driver, as their name and plate (case and spaces ignored),
    hashed short so the key stays small and holds no personal data."""
    text = "|".join(" ".join((part or "").split()).casefold() for part in (name, plate))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def revision(template: str, *, pickup_at: datetime, driver_name: str | None, driver_plate: str | None) -> str:
    if template == "pickup_moved":
        return pickup_revision(pickup_at)
    if template == "driver_changed":
        return driver_revision(driver_name, driver_plate)
    return FIRST


def dedupe_key(booking_id: int, template: str, channel: str, revision: str) -> str:
    """Once per booking, template, channel and revision (``traveller_messages.dedupe_key`` is unique)."""
    return f"{booking_id}:{template}:{channel}:{revision}"


def sms_over_limit(statuses: Iterable[str], planned_now: int = 0) -> bool:
    """Whether one more SMS would be the booking's ninth: ``statuses`` are its SMS messages' statuses
    (skipped, suppressed and expired ones do not count), ``planned_now`` the ones being planned with it."""
    return sum(1 for s in statuses if s in SMS_COUNTED) + planned_now >= SMS_LIMIT
