"""Addresses and languages of messages to travellers (docs/rules/messages.md#languages). Pure.

* A message shows its address masked, never whole: ``+44 7*** ***456``, ``a***@example.com`` (the
  number's country code, its first national digit and its last three; the e-mail's first letter and
  its domain). The mask has the same shape whatever the number's length, so it tells nothing more.
* ``passenger.language`` is kept by the create as ``reference/languages.normalize_tag`` reads it (a
  canonical BCP 47 tag, or None: never an error).
* The language a message is written in is ``i18n/languages.message_language``'s.
"""

from __future__ import annotations

import phonenumbers

from transfers.reference.languages import normalize_tag

__all__ = ["mask", "mask_email", "mask_phone", "normalize_tag"]


def mask_phone(number: str | None) -> str | None:
    """``+447911123456`` -> ``+44 7*** ***456``."""
    if not number:
        return None
    digits = "".join(ch for ch in number if ch.isdigit())
    try:
        parsed = phonenumbers.parse(number if number.startswith("+") else "+" + digits, None)
        country = str(parsed.country_code)
        national = phonenumbers.national_significant_number(parsed)
    except phonenumbers.NumberParseException:
        country, national = "", digits
    if len(national) < 5:
        return f"+{country} ***" if country else "***"
    head = f"+{country} " if country else ""
    return f"{head}{national[0]}*** ***{national[-3:]}"


def mask_email(address: str | None) -> str | None:
    """``alice@example.com`` -> ``a***@example.com``."""
    if not address:
        return None
    local, at, domain = address.rpartition("@")
    if not at:
        return "***"
    return f"{local[:1]}***@{domain}"


def mask(channel: str, address: str | None) -> str | None:
    """The address as shown anywhere (the API, the pages, the CLI): masked by its channel."""
    return mask_phone(address) if channel == "sms" else mask_email(address)
