"""Phone numbers as people type them, stored as E.164 (docs/rules/booking.md#phone-numbers).

The one normalisation every door uses: the booking API's create and amend (the passenger's phone),
the agency portal's forms (which call the same rules), the reverse API's and the partner portal's
approval (the driver's phone). Reading the number itself is the maintained ``phonenumbers``
library's job (Google's libphonenumber metadata: country codes, national prefixes, valid ranges);
what is decided here is which characters a person may type and which country a number without
its code is read in.

* Allowed: ASCII digits, spaces, ``-``, ``.``, ``(``, ``)`` and ``/``, with one leading ``+`` or
  ``00`` for the country code; ``+44 (0)7911 123456``'s ``(0)`` (the national prefix people put in
  brackets) is understood. Letters are refused, although the library would read them as a phone
  keypad's (``CALL-ME``): a typo must not dial a stranger. Other scripts' digits are refused too
  (the contract's pattern is ASCII), and so is anything longer than ``MAX_TYPED`` characters.
* ``region`` None (the passenger's phone): the number must carry its country code; a driver's phone
  typed without one is read in the pickup airport's country (``region`` its ISO 3166 code).
* The result is valid by the library's metadata and is returned as E.164 (``+447911123456``), so a
  Call button works from any SIM.
"""

from __future__ import annotations

import re

import phonenumbers

from transfers.errors import Invalid

MAX_TYPED = 32  # characters as typed, separators included (the forms' maxlength)
_TYPED = re.compile(r"(\+|00)?[0-9 ()./-]+")
_DIGIT = re.compile(r"[0-9]")


class PhoneUnreadable(Invalid):
    """A typed phone number that cannot be read; ``reason`` says why, in words for the person who
    typed it (the partner portal's field error, the reverse API's 422 message). The callers turn it
    into their own answer (1009 for a passenger's phone, ``UpdateRefused`` for a driver's)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def e164(value: object, *, region: str | None = None) -> str:
    """``value`` as E.164, or PhoneUnreadable. ``region``: the ISO 3166 country a number typed
    without its country code is read in (None: such a number is refused)."""
    if not isinstance(value, str):
        raise PhoneUnreadable("a phone number must be text")
    typed = value.strip()
    if not typed:
        raise PhoneUnreadable("a phone number is required")
    if len(typed) > MAX_TYPED:
        raise PhoneUnreadable(f"a phone number has at most {MAX_TYPED} characters")
    if not _TYPED.fullmatch(typed) or "+" in typed[1:]:
        raise PhoneUnreadable(
            "a phone number may hold only digits, spaces, dashes, dots and brackets, after a leading + or 00"
        )
    if not _DIGIT.search(typed):
        raise PhoneUnreadable("a phone number needs digits")
    if typed.startswith("00"):
        typed = "+" + typed[2:]  # the international call prefix of most of the world, as people write it
    if not typed.startswith("+") and region is None:
        raise PhoneUnreadable("the number needs its country code, like +44 7911 123456")
    try:
        number = phonenumbers.parse(typed, None if typed.startswith("+") else region)
    except phonenumbers.NumberParseException:
        raise PhoneUnreadable(_not_valid(typed, region)) from None
    if not phonenumbers.is_valid_number(number):
        raise PhoneUnreadable(_not_valid(typed, region))
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def _not_valid(typed: str, region: str | None) -> str:
    if typed.startswith("+") or region is None:
        return "not a valid phone number: check the country code and the digits"
    return (
        f"not a valid phone number in {region} (the pickup airport's country): "
        "check the digits, or add the country code"
    )


FALLBACK_EXAMPLE = "+44 7911 123456"


def example(region: str | None) -> str:
    """A mobile number as it is dialled in ``region`` (ISO 3166), from the library's own examples: the
    partner portal's placeholder for a driver's phone, which ``e164(example(r), region=r)`` accepts."""
    number = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE) if region else None
    if number is None:
        return FALLBACK_EXAMPLE
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL))
