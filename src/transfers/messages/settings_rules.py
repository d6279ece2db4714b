"""The rules of a client's message settings (docs/rules/messages.md#settings). Pure: a change and the
settings as they stand in, the settings to store out, or ``MessageSettingsInvalid`` naming the field and why.

A change names only what it changes (None: unchanged), so the CLI's flags, the agency portal's form and
the console's form share these rules:

* ``brand_name``: 1..30 characters after surrounding spaces are cut, none of the characters
  ``transfers/text.py`` refuses in a name (controls, bidirectional overrides); empty is refused.
* ``sms_sender``: 3..11 characters of ``[A-Za-z0-9 ]`` with at least one letter (an alphanumeric sender
  ID); empty clears it (the service's ``TRANSFERS_SMS_SENDER`` is used).
* ``reply_to``: one e-mail address; empty clears it.
* ``support_phone``: a phone with its country code, stored as E.164 (``reference/phones.py``); empty
  clears it.
* ``default_language``: one of ``LANGUAGES`` (any case); anything else is refused.
* ``channels``: any of ``email``, ``sms``; ``sms`` only when the client confirmed that its travellers
  agreed to be texted (``travellers_consented``, recorded with its time; given again, the first time
  stays); any channel, and ``feedback``, only with a brand name (it opens every message).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from email_validator import EmailNotValidError, validate_email

from transfers.errors import Invalid
from transfers.i18n.languages import LANGUAGES
from transfers.messages.models import Channel, MessageSettings
from transfers.reference.phones import PhoneUnreadable, e164
from transfers.text import REFUSED, refused_character

BRAND_MAX = 30
SENDER_MIN, SENDER_MAX = 3, 11
_SENDER = re.compile(r"[A-Za-z0-9 ]+")
_LETTER = re.compile(r"[A-Za-z]")
EMAIL_MAX = 320


class MessageSettingsInvalid(Invalid):
    """A setting breaks its rule; ``field`` names it (the forms show the message beside it)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SettingsChange:
    """What a caller changes; None leaves a setting as it is. ``channels``: the whole list wanted (names
    as typed; empty: every channel off). ``travellers_consented``: True records the client's confirmation."""

    channels: Iterable[str] | None = None
    brand_name: str | None = None
    sms_sender: str | None = None
    reply_to: str | None = None
    support_phone: str | None = None
    default_language: str | None = None
    feedback: bool | None = None
    travellers_consented: bool = False


def brand_name(value: str) -> str:
    brand = value.strip()
    if not brand:
        raise MessageSettingsInvalid("brand_name", "required, 1..30 characters")
    if len(brand) > BRAND_MAX:
        raise MessageSettingsInvalid("brand_name", f"at most {BRAND_MAX} characters (this has {len(brand)})")
    bad = refused_character(brand)
    if bad is not None:
        raise MessageSettingsInvalid("brand_name", f"may not hold {REFUSED} ({bad})")
    return brand


def sms_sender(value: str) -> str | None:
    sender = value.strip()
    if not sender:
        return None
    if not SENDER_MIN <= len(sender) <= SENDER_MAX:
        raise MessageSettingsInvalid("sms_sender", f"{SENDER_MIN}..{SENDER_MAX} characters (this has {len(sender)})")
    if not _SENDER.fullmatch(sender):
        raise MessageSettingsInvalid("sms_sender", "only the letters A-Z and a-z, the digits 0-9 and spaces")
    if not _LETTER.search(sender):
        raise MessageSettingsInvalid("sms_sender", "needs at least one letter")
    return sender


def reply_to(value: str) -> str | None:
    address = value.strip()
    if not address:
        return None
    if len(address) > EMAIL_MAX or refused_character(address) is not None:
        raise MessageSettingsInvalid("reply_to", "not an e-mail address")
    try:
        return str(validate_email(address, check_deliverability=False).normalized)
    except EmailNotValidError:
        raise MessageSettingsInvalid("reply_to", "not an e-mail address") from None


def support_phone(value: str) -> str | None:
    if not value.strip():
        return None
    try:
        return e164(value)
    except PhoneUnreadable as exc:
        raise MessageSettingsInvalid("support_phone", exc.reason) from None


def default_language(value: str) -> str:
    language = value.strip().lower()
    if language not in LANGUAGES:
        raise MessageSettingsInvalid("default_language", "one of " + ", ".join(LANGUAGES))
    return language


def channels(names: Iterable[str]) -> tuple[Channel, ...]:
    wanted: set[Channel] = set()
    for name in names:
        cleaned = name.strip().lower()
        if not cleaned:
            continue
        try:
            wanted.add(Channel(cleaned))
        except ValueError:
            raise MessageSettingsInvalid("channels", f"{name!r} is not a channel: any of email, sms") from None
    return tuple(c for c in Channel if c in wanted)


def changed(current: MessageSettings, change: SettingsChange, now: datetime) -> MessageSettings:
    """The settings after ``change``, checked as a whole; ``MessageSettingsInvalid`` leaves ``current`` as it is."""
    after = current
    if change.brand_name is not None:
        after = replace(after, brand_name=brand_name(change.brand_name))
    if change.sms_sender is not None:
        after = replace(after, sms_sender=sms_sender(change.sms_sender))
    if change.reply_to is not None:
        after = replace(after, reply_to=reply_to(change.reply_to))
    if change.support_phone is not None:
        after = replace(after, support_phone=support_phone(change.support_phone))
    if change.default_language is not None:
        after = replace(after, default_language=default_language(change.default_language))
    if change.feedback is not None:
        after = replace(after, feedback=change.feedback)
    if change.travellers_consented and after.travellers_consented_at is None:
        after = replace(after, travellers_consented_at=now)
    if change.channels is not None:
        after = replace(after, channels=channels(change.channels))
    if after.sms_on and after.travellers_consented_at is None:
        raise MessageSettingsInvalid(
            "channels", "sms needs the client's confirmation that its travellers agreed to be texted"
        )
    if (after.channels or after.feedback) and not after.brand_name:
        raise MessageSettingsInvalid("brand_name", "required before messages are turned on (it opens every message)")
    return after
