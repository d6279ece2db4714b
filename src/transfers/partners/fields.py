"""The rules of a partner's editable fields, shared by the CLI (``transfers partners create``) and
the console's ``New partner`` and edit forms, so both refuse the same input with the same words.
Each parser answers the clean value or raises ``ValueError`` with a message naming no option or
field (the caller adds ``--airports`` or shows it beside the field). Pure."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from transfers.partners.models import EVERY_AIRPORT
from transfers.reference.airports import is_known

_IATA = re.compile(r"[A-Z]{3}")
NAME_MAX = 200


def service_area(text: str) -> tuple[str, ...]:
    """``LHR,CDG`` or ``*``; every code must name a known airport (the maintained dataset), because a
    typo here would silently leave the partner out of every search for the airport meant."""
    codes = sorted({part.strip().upper() for part in text.split(",") if part.strip()})
    if not codes:
        raise ValueError("needs at least one IATA code (e.g. LHR,CDG) or *")
    if EVERY_AIRPORT in codes:
        if len(codes) > 1:
            raise ValueError("* already means every airport; do not combine it with codes")
        return (EVERY_AIRPORT,)
    unknown = [c for c in codes if not _IATA.fullmatch(c) or not is_known(c)]
    if unknown:
        raise ValueError(f"unknown IATA airport code(s): {', '.join(unknown[:20])}")
    return tuple(codes)


def markup(text: str) -> Decimal:
    """A percent from 0 to 100 with at most three decimals (the column is NUMERIC(7,3))."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"{text[:40]!r} is not a number (a percent such as 10 or 7.5)") from None
    if not value.is_finite() or not Decimal(0) <= value <= Decimal(100):
        raise ValueError("must be a percent between 0 and 100")
    if value != value.quantize(Decimal("0.001")):
        raise ValueError("allows at most three decimals")
    return value


def partner_name(text: str) -> str:
    name = text.strip()
    if not name or len(name) > NAME_MAX:
        raise ValueError(f"must be 1..{NAME_MAX} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise ValueError("may not contain control characters")
    return name
