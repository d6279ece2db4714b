"""``render(template, channel, language, ctx)``: a message to a traveller as it is sent
(docs/rules/messages.md#templates). Pure: the words of ``wording.py`` through the language's catalog,
dates and times by Babel in the airport's local time.

Every message opens with the brand, names the reservation number and the pickup (local date and
24-hour time), links the traveller's page and the opt-out page, and gives the support phone when the
client set one. An SMS is a few short lines in the GSM alphabet (``segments.to_gsm7``); an e-mail is a
subject and a plain-text body.
"""

from __future__ import annotations

from typing import Any

from transfers.i18n.catalogs import Words
from transfers.i18n.dates import clock, long_date, short_date
from transfers.i18n.languages import DEFAULT_LANGUAGE, LANGUAGES
from transfers.messages.text import wording as w
from transfers.messages.text.context import MAX_DRIVER_FIRST_NAME, MessageContext, Rendered
from transfers.messages.text.segments import to_gsm7

EMAIL, SMS = "email", "sms"
# docs/rules/messages.md#templates: the channels each template goes on.
CHANNELS: dict[str, tuple[str, ...]] = {
    "confirmed": (EMAIL,),
    "reminder": (EMAIL, SMS),
    "driver_changed": (EMAIL, SMS),
    "pickup_moved": (EMAIL, SMS),
    "driver_arrived": (SMS,),
    "cancelled": (EMAIL, SMS),
    "feedback": (EMAIL,),
}


def render(template: str, channel: str, language: str, ctx: MessageContext) -> Rendered:
    """The message ``template`` on ``channel`` in ``language`` (one of ``i18n.LANGUAGES``; anything else is
    written in English). A template on a channel it does not go on (``confirmed`` by SMS), or a
    ``feedback`` without its rating link, is a caller's mistake: ``ValueError``."""
    if channel not in CHANNELS.get(template, ()):
        raise ValueError(f"no {template!r} message goes by {channel!r}")
    if template == "feedback" and not ctx.rating_url:
        raise ValueError("a feedback message needs the rating link (ctx.rating_url)")
    language = language if language in LANGUAGES else DEFAULT_LANGUAGE
    if channel == SMS:
        return Rendered(None, to_gsm7(_sms(template, ctx, _Words(language, _values(ctx, language, short=True)))))
    return _email(template, ctx, _Words(language, _values(ctx, language, short=False)))


class _Words:
    """A language's words with the message's values filled in (``Words`` with the values bound)."""

    def __init__(self, language: str, values: dict[str, Any]) -> None:
        self._words = Words(language)
        self._values = values

    def __call__(self, message: str, **extra: Any) -> str:
        return self._words(message, **{**self._values, **extra})


def driver_first_name(name: str | None) -> str | None:
    """The driver's first name as a message gives it: at most ``MAX_DRIVER_FIRST_NAME`` characters."""
    if not name or not name.strip():
        return None
    return name.strip()[:MAX_DRIVER_FIRST_NAME].strip()


def _values(ctx: MessageContext, language: str, *, short: bool) -> dict[str, Any]:
    date = short_date if short else long_date
    previous = ""
    if ctx.previous_pickup_local is not None:
        before = ctx.previous_pickup_local.astimezone(ctx.pickup_local.tzinfo)
        previous = clock(before, language)
        if before.date() != ctx.pickup_local.date():
            previous = f"{short_date(before, language)} {previous}"
    return {
        "brand": ctx.brand_name.strip(),
        "reservation": ctx.reservation_no,
        "date": date(ctx.pickup_local, language),
        "time": clock(ctx.pickup_local, language),
        "previous": previous,
        "airport": ctx.airport_name or ctx.airport_iata,
        "driver": driver_first_name(ctx.driver_first_name) or "",
        "plate": (ctx.driver_plate or "").strip(),
        "vehicle": (ctx.vehicle or "").strip(),
        "phone": (ctx.support_phone or "").strip(),
        "meeting_point": (ctx.meeting_point or "").strip(),
    }


def _sms(template: str, ctx: MessageContext, say: _Words) -> str:
    driver = driver_first_name(ctx.driver_first_name)
    plate = (ctx.driver_plate or "").strip()
    lines: list[str] = []
    if template == "reminder":
        lines.append(say(w.SMS_REMINDER))
    elif template == "driver_changed":
        lines.append(say(w.SMS_DRIVER_CHANGED))
        if driver:
            lines.append(say(w.SMS_DRIVER))
        if plate:
            lines.append(say(w.SMS_PLATE))
    elif template == "pickup_moved":
        lines.append(say(w.SMS_PICKUP_MOVED))
    elif template == "driver_arrived":
        lines.append(say(w.SMS_DRIVER_ARRIVED if driver else w.SMS_DRIVER_ARRIVED_UNNAMED))
        if plate:
            lines.append(say(w.SMS_PLATE))
    elif template == "cancelled":
        lines.append(say(w.SMS_CANCELLED))
    lines.append(say(w.SMS_TRACK, url=ctx.tracking_url))
    if ctx.support_phone:
        lines.append(say(w.SMS_HELP))
    lines.append(say(w.SMS_OPTOUT, url=ctx.optout_url))
    return "\n".join(lines)


_SUBJECTS = {
    "confirmed": w.SUBJECT_CONFIRMED,
    "reminder": w.SUBJECT_REMINDER,
    "driver_changed": w.SUBJECT_DRIVER_CHANGED,
    "pickup_moved": w.SUBJECT_PICKUP_MOVED,
    "cancelled": w.SUBJECT_CANCELLED,
    "feedback": w.SUBJECT_FEEDBACK,
}
_INTROS = {
    "confirmed": w.INTRO_CONFIRMED,
    "reminder": w.INTRO_REMINDER,
    "driver_changed": w.INTRO_DRIVER_CHANGED,
    "pickup_moved": w.INTRO_PICKUP_MOVED,
    "cancelled": w.INTRO_CANCELLED,
    "feedback": w.INTRO_FEEDBACK,
}


def _email(template: str, ctx: MessageContext, say: _Words) -> Rendered:
    subject = say(_SUBJECTS[template])
    blocks: list[list[str]] = [[ctx.brand_name.strip()], [say(_INTROS[template])]]
    if template == "feedback":
        blocks[-1].extend([ctx.rating_url or "", say(w.FEEDBACK_WINDOW)])
    details = [say(w.LINE_RESERVATION), say(w.LINE_PICKUP)]
    if ctx.pickup_place:
        details.append(say(w.LINE_FROM, place=ctx.pickup_place.strip()))
    if ctx.dropoff_place:
        details.append(say(w.LINE_TO, place=ctx.dropoff_place.strip()))
    if template in ("confirmed", "reminder", "driver_changed", "pickup_moved"):
        if ctx.vehicle:
            details.append(say(w.LINE_VEHICLE))
        if driver_first_name(ctx.driver_first_name):
            details.append(say(w.LINE_DRIVER))
        if ctx.driver_plate:
            details.append(say(w.LINE_PLATE))
        if ctx.meeting_point:
            details.append(say(w.LINE_MEETING_POINT))
    blocks.append(details)
    blocks.append([say(w.TRACK), ctx.tracking_url])
    if ctx.support_phone:
        blocks.append([say(w.HELP)])
    blocks.append([say(w.FOOTER), say(w.OPTOUT), ctx.optout_url])
    body = "\n\n".join("\n".join(line for line in block if line) for block in blocks) + "\n"
    return Rendered(subject, body)
