"""Who a text is sent from, to which number, and what it ends with (docs/rules/messages.md#sending).

* The US (with its territories on the +1 plan) and Canada take no alphanumeric sender: their numbers are
  texted from ``TRANSFERS_SMS_LONG_CODE`` and the text ends "Reply STOP to opt out." (in English, whatever
  the message's language: it is the carriers' required wording, and STOP is the word the service reads).
* Every other number is texted from the client's ``sms_sender``, else ``TRANSFERS_SMS_SENDER``.
* A number the phone library (``phonenumbers``) types as a fixed line gets no text (``not_mobile``); one it
  types as "fixed line or mobile" (as most US numbers) does. A number it cannot read or calls invalid
  gets none either (``no_address``): the provider would refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat, PhoneNumberType

STOP_LINE = "Reply STOP to opt out."
FOOTER = "\n" + STOP_LINE  # what a text to the US or Canada ends with (counted by the segment checks)
# Regions texted from the long code: the US, its territories on the +1 plan, and Canada.
LONG_CODE_REGIONS = frozenset({"US", "CA", "PR", "VI", "GU", "AS", "MP"})


@dataclass(frozen=True, slots=True)
class SmsRoute:
    """Where a text goes: ``to`` in E.164, ``sender`` the From, ``footer`` what ends the text."""

    to: str
    sender: str
    footer: str = ""

    def text(self, body: str) -> str:
        return body + self.footer


@dataclass(frozen=True, slots=True)
class NoSms:
    """No text to this number: ``reason`` is the skipped message's (``not_mobile`` or ``no_address``)."""

    reason: str


def e164(number: str) -> str | None:
    """``number`` in E.164 (``+447911123456``), or None when the phone library cannot read it as a valid
    number. Numbers are stored with their ``+``; one without is not guessed at."""
    try:
        parsed = phonenumbers.parse(number.strip(), None)
    except NumberParseException:
        return None
    if not phonenumbers.is_valid_number(parsed):
        return None
    return phonenumbers.format_number(parsed, PhoneNumberFormat.E164)


def route(number: str, *, client_sender: str | None, long_code: str, default_sender: str) -> SmsRoute | NoSms:
    """The route of a text to ``number`` (the module's docstring). ``long_code``: TRANSFERS_SMS_LONG_CODE
    (required with twilio; empty under none/sandbox, where the default sender stands in for it);
    ``default_sender``: TRANSFERS_SMS_SENDER."""
    try:
        parsed = phonenumbers.parse(number.strip(), None)
    except NumberParseException:
        return NoSms("no_address")
    if not phonenumbers.is_valid_number(parsed):
        return NoSms("no_address")
    if phonenumbers.number_type(parsed) == PhoneNumberType.FIXED_LINE:
        return NoSms("not_mobile")
    to = phonenumbers.format_number(parsed, PhoneNumberFormat.E164)
    if phonenumbers.region_code_for_number(parsed) in LONG_CODE_REGIONS:
        return SmsRoute(to=to, sender=long_code or default_sender, footer=FOOTER)
    return SmsRoute(to=to, sender=(client_sender or "").strip() or default_sender)
