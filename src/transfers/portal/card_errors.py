"""The rate card form's problems in a dispatcher's words, beside the field that caused them
(``card_form.py`` maps the form to the card and back; the card's schema and domain rules find the
problems, with a ``$.path`` each): the schema's sentences speak of JSON and quote values back,
these speak of the form; and the summary lists them in the order the fields appear on the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from transfers.portal.card_form import ROW_FIELD, TABLES, CardForm, Mapped
from transfers.ratecards.card import CardError

_BELOW = re.compile(r"^(-?[\d.]+) is less than the minimum of (-?[\d.]+)$")
_ABOVE = re.compile(r"^(-?[\d.]+) is greater than the maximum of (-?[\d.]+)$")
_NOT_TYPE = re.compile(r"^'.*' is not of type '(integer|number)'$", re.DOTALL)


# What a value that breaks its pattern should look like, by field (the schema's own words speak
# of JSON; these speak of the form). Money amounts share one sentence.
_SHAPES = {
    "currency": "Enter a 3-letter currency code in capitals, like EUR.",
    "blackout_dates": "Enter dates like 2027-01-15, one a line",
    "id": "Use 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit.",
    "airport": "Enter a 3-letter airport code, like LHR.",
    "night_from": "Enter a time from 00:00 to 23:59, like 22:00.",
    "night_to": "Enter a time from 00:00 to 23:59, like 06:00.",
    "night_percent": "Enter a percentage from 0 to 100 with at most two decimals, like 20.",
}
_AMOUNTS = frozenset({"base", "per_km", "minimum", "price"})


def _words(error: CardError, name: str) -> str:
    """A schema message in a dispatcher's words where it quotes the value back or speaks JSON."""
    reason = error.reason
    part = name.split("-", 1)[-1]
    if reason.startswith("'' "):
        return "Enter a value (it is required)."
    if reason.endswith("should be non-empty"):
        return "Enter at least one vehicle." if error.path == "$.vehicles" else "Enter at least one row."
    if (
        reason.startswith("'")
        and "is not a known" not in reason
        and (" is not " in reason or " does not match " in reason)
        and not _NOT_TYPE.match(reason)
    ):
        if part in _AMOUNTS:
            return "Enter an amount with at most the card currency's decimals (EUR two, JPY none), like 40.00."
        if part in _SHAPES:
            shape = _SHAPES[part]
            quoted = re.split(r" is not | does not match ", reason, maxsplit=1)[0]
            return f"{shape}: {quoted} is not one." if part == "blackout_dates" else shape
    if match := _BELOW.match(reason):
        return f"Enter {match.group(2)} or more."
    if match := _ABOVE.match(reason):
        return f"Enter {match.group(2)} or less."
    if _NOT_TYPE.match(reason):
        return "Enter a whole number, like 3." if "integer" in reason else "Enter a number."
    if reason.endswith("is a required property"):
        return reason.replace("is a required property", "is required")
    return reason[0].upper() + reason[1:] if reason else reason


def field_errors(form: CardForm, mapped: Mapped, card_errors: list[CardError]) -> tuple[dict[str, str], list[str]]:
    """Messages by field (the form's own first: "Enter a whole number" beats the schema's "is not
    of type"), and the card's problems that belong to no field (shown in the summary only)."""
    by_field = dict(mapped.problems)
    general: list[str] = []
    for error in card_errors:
        name = mapped.field_for(error.path)
        if not name or not form.has_field(name):  # e.g. "$.vehicles" when the table has no row at all
            general.append(str(error))
            continue
        by_field.setdefault(name, _words(error, name))
    return by_field, general


_ORDER = {"currency": 0, "min_lead_hours": 1, "blackout_dates": 2}


def in_page_order(errors: Mapping[str, str]) -> dict[str, str]:
    """Errors in the order their fields appear on the page (the summary reads top to bottom)."""

    def key(name: str) -> tuple[int, int, int]:
        match = ROW_FIELD.match(name)
        if match is None:
            return (0, _ORDER.get(name, 9), 0)
        table = match.group(1)
        fields = TABLES[table]
        part = match.group(3)
        return (1 + "vfxt".index(table), int(match.group(2)), fields.index(part) if part in fields else 99)

    return {name: errors[name] for name in sorted(errors, key=key)}
