"""Create-booking and cancel rules (docs/rules/booking.md#create, docs/rules/errors.md#create-codes,
docs/rules/errors.md#cancel-codes, docs/rules/booking.md). Pure: no HTTP, no SQL.

``validate_create`` runs the 7.2 table in order. The one check that needs the database (1002: the
search exists, is unexpired and is the caller's) is answered by the caller beforehand and passed
in as ``offer``; everything after it is decided here.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from email_validator import EmailNotValidError, validate_email

from transfers import text
from transfers.errors import Code, Invalid, NotFound
from transfers.reference.flights import normalise
from transfers.reference.languages import normalize_tag
from transfers.reference.phones import PhoneUnreadable, e164
from transfers.search.offers import Offer, OfferedExtra
from transfers.search.rules import is_int

MAX_TEXT = 200
MAX_FLIGHT = 64
MAX_EXTRA_REQUESTS = 1000
MAX_EXTRAS = 20
MAX_QUANTITY = 20
MAX_NOTE = 1000
MAX_VEHICLE_NO = 999_999_999  # what fits every database's INTEGER; search numbers are far smaller


@dataclass(frozen=True)
class ChosenExtra:
    extra: OfferedExtra
    quantity: int

    @property
    def charged_units(self) -> int:
        return self.quantity if self.extra.pricing_type == "PER_ITEM" else 1

    @property
    def label(self) -> str:
        """docs/rules/booking.md: PER_BOOKING extras are named without a count; others with "x N" when N > 1."""
        if self.extra.pricing_type == "PER_ITEM" and self.quantity > 1:
            return f"{self.extra.name} x {self.quantity}"
        return self.extra.name


@dataclass(frozen=True)
class BookingRequest:
    name: str
    surname: str
    phone: str
    email: str
    flight_number: str
    extra_requests: str | None
    suitcase: int
    small_bags: int
    extras: list[ChosenExtra]
    total: Decimal
    net_total: Decimal
    # docs/rules/messages.md#settings: the passenger's language (a normalized BCP 47 tag, None when absent or
    # not one known) and the message channels this booking switches off (``{"sms": False}``; None: none)
    language: str | None = None
    message_channels: dict[str, bool] | None = None


MESSAGE_CHANNELS = ("email", "sms")


def message_switches(value: Any) -> dict[str, bool] | None:
    """The create's ``messages`` (docs/rules/messages.md#settings): absent or null, or an object whose keys
    are ``email`` and ``sms`` and whose values are booleans (null: as if absent). ``true`` leaves the
    channel to the client's settings (a booking can only switch a channel off), so what is kept is the
    channels switched off, ``{"sms": False}``, or None when none is. Anything else: 1023."""
    if value is None:
        return None
    if not isinstance(value, dict) or any(key not in MESSAGE_CHANNELS for key in value):
        raise Invalid(Code.MESSAGES_INVALID)
    off: dict[str, bool] = {}
    for channel in MESSAGE_CHANNELS:
        switch = value.get(channel)
        if switch is not None and not isinstance(switch, bool):
            raise Invalid(Code.MESSAGES_INVALID)
        if switch is False:
            off[channel] = False
    return off or None


def vehicle_number(value: Any) -> int | None:
    """The vehicle number as the search spelled it: a JSON integer or a string of ASCII digits
    (no sign, spaces or leading zeros); never a boolean or a float. None when unusable."""
    if is_int(value):
        return int(value) if 0 < value <= MAX_VEHICLE_NO else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and not value.startswith("0") and len(value) < 10:
        return int(value)
    return None


def check_search_id(body: dict[str, Any]) -> str:
    search_id = body.get("search_id")
    if search_id is None or search_id == "":
        raise Invalid(Code.SEARCH_ID_REQUIRED)
    if not isinstance(search_id, str) or len(search_id) > 64 or "\x00" in search_id:
        raise NotFound(Code.SEARCH_NOT_EXISTS)  # PostgreSQL cannot even compare a text holding NUL
    return search_id


def validate_create(body: dict[str, Any], *, search_found: bool, offer: Offer | None) -> BookingRequest:
    if not search_found:
        raise NotFound(Code.SEARCH_NOT_EXISTS)
    if body.get("vehicle_id") is None:
        raise Invalid(Code.VEHICLE_ID_REQUIRED)
    if offer is None:
        raise Invalid(Code.VEHICLE_ID_INVALID)
    passenger = body.get("passenger")
    if not isinstance(passenger, dict):
        raise Invalid(Code.PASSENGER_REQUIRED)
    name = _text(passenger.get("name"), Code.PASSENGER_NAME_REQUIRED)
    surname = _text(passenger.get("surname"), Code.PASSENGER_SURNAME_REQUIRED)
    phone = _phone(passenger.get("phone"))
    email = _email(passenger.get("email"))
    travel = body.get("travel_details")
    if not isinstance(travel, dict):
        raise Invalid(Code.TRAVEL_DETAILS_REQUIRED)
    extra_requests = requests_text(travel.get("extra_requests"))  # a travel_details failure: ahead of 1013
    flight = stored_flight_number(_text(travel.get("flight_number"), Code.FLIGHT_NUMBER_REQUIRED, MAX_FLIGHT))
    suitcase = _count(body.get("suitcase"), offer.suitcases, Code.SUITCASE_REQUIRED, Code.SUITCASE_INVALID)
    small_bags = _count(body.get("small_bags"), offer.small_bags, Code.SMALL_BAGS_REQUIRED, Code.SMALL_BAGS_INVALID)
    extras = _extras(body.get("extra_services"), offer)
    switches = message_switches(body.get("messages"))  # 1023, after the extras (docs/rules/errors.md#create-codes)
    total = offer.sell_price + sum((c.extra.price * c.charged_units for c in extras), Decimal("0"))
    net_total = offer.net_price + sum((c.extra.net_price * c.charged_units for c in extras), Decimal("0"))
    return BookingRequest(
        name,
        surname,
        phone,
        email,
        flight,
        extra_requests,
        suitcase,
        small_bags,
        extras,
        total,
        net_total,
        language=normalize_tag(passenger.get("language")),
        message_channels=switches,
    )


def _text(value: Any, code: Code, limit: int = MAX_TEXT) -> str:
    """A one-line text (a name, a flight number): 1..``limit`` characters, not only spaces, none that
    ``transfers.text`` refuses (docs/rules/booking.md#text); else ``code``, the field's own SPEC code."""
    if not isinstance(value, str) or not value.strip() or len(value) > limit or not text.is_clean(value):
        raise Invalid(code)
    return value.strip()


def requests_text(value: Any) -> str | None:
    """``travel_details.extra_requests`` (the way out's, an amendment's, the way back's): absent, null or a
    free text of at most 1000 characters that may span lines (docs/rules/booking.md#text); stored
    stripped, None when empty. Else 1012: a ``travel_details`` failure."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_EXTRA_REQUESTS or not text.is_clean(value, multiline=True):
        raise Invalid(Code.TRAVEL_DETAILS_REQUIRED)
    return value.strip() or None


def _phone(value: Any) -> str:
    """The passenger's phone as typed (spaces, dashes, dots, brackets, ``(0)``, a leading ``00``), stored
    as E.164; it must carry its country code (docs/rules/booking.md#phone-numbers). Else 1009."""
    if value is None or value == "":
        raise Invalid(Code.PASSENGER_PHONE_REQUIRED)
    try:
        return e164(value)
    except PhoneUnreadable:
        raise Invalid(Code.PASSENGER_PHONE_INVALID) from None


def _email(value: Any) -> str:
    if value is None or value == "":
        raise Invalid(Code.PASSENGER_EMAIL_REQUIRED)
    if not isinstance(value, str) or len(value) > 320:
        raise Invalid(Code.PASSENGER_EMAIL_INVALID)
    try:
        return str(validate_email(value, check_deliverability=False).normalized)
    except EmailNotValidError:
        raise Invalid(Code.PASSENGER_EMAIL_INVALID) from None


def _count(value: Any, capacity: int, required: Code, invalid: Code) -> int:
    if value is None:
        raise Invalid(required)
    if not is_int(value) or not 0 <= value <= capacity:
        raise Invalid(invalid)
    return int(value)


def _extras(value: Any, offer: Offer) -> list[ChosenExtra]:
    """1018-1021 in table order across all items: a 1018 anywhere in the list wins over a 1019 in an
    earlier item, and so on (docs/rules/errors.md#order-of-checks: the first failing check in the order of the
    table)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_EXTRAS or not all(isinstance(item, dict) for item in value):
        raise Invalid(Code.EXTRA_SERVICES_INVALID)
    ids = [item.get("id") for item in value]
    int_ids = [extra_id for extra_id in ids if is_int(extra_id)]
    if len(set(int_ids)) != len(int_ids):  # the same extra twice
        raise Invalid(Code.EXTRA_SERVICES_INVALID)
    if any(extra_id is None for extra_id in ids):
        raise Invalid(Code.EXTRA_SERVICE_ID_REQUIRED)
    offered = [extra for extra in (offer.find_extra(i) if is_int(i) else None for i in ids) if extra is not None]
    if len(offered) != len(ids):
        raise Invalid(Code.EXTRA_SERVICE_ID_INVALID)
    chosen: list[ChosenExtra] = []
    for item, extra in zip(value, offered, strict=True):
        quantity = item.get("quantity")
        if quantity is None:
            quantity = 1
        elif not is_int(quantity) or not 1 <= quantity <= MAX_QUANTITY:
            raise Invalid(Code.EXTRA_SERVICE_QUANTITY_INVALID)
        chosen.append(ChosenExtra(extra, int(quantity)))
    return chosen


# The field checks, by name, for the amendment rules (``bookings/amend_rules.py``) and the way back's
# (``returns/rules.py``).
required_text = _text
phone_number = _phone
email_address = _email


def reason_id(raw: str) -> int:
    if raw == "":
        raise Invalid(Code.CANCELLATION_TYPE_REQUIRED)
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise Invalid(Code.CANCELLATION_TYPE_INVALID)
    return int(raw)


def clean_note(note: str | None) -> str | None:
    """The optional cancellation note, bounded to 1000 characters (longer notes are cut). Cleaned, not
    refused, of what ``transfers.text`` refuses (docs/rules/booking.md#text): a cancel never fails on its
    optional note, and SPEC has no code for one."""
    if note is None:
        return None
    note = text.without_refused(note).strip()
    return note[:MAX_NOTE] or None


def stored_flight_number(text: str) -> str:
    """docs/rules/flights.md#flight-number: stored normalised (``"ba 0123"`` -> ``BA123``); a value that is only
    spaces and hyphens is kept as typed (it is accepted, and never tracked)."""
    return normalise(text) or text
