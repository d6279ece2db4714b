"""What a message to a traveller is rendered from, and what comes out (docs/rules/messages.md#templates).

``MessageContext`` holds only what a message may say. What it never holds cannot leak into a text: no
price, no partner, no passenger e-mail or phone (the address a message goes to is the sender's business,
not the text's).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# docs/rules/messages.md#templates: the longest values a text is sized for (the SMS segment test renders
# every template with them). A longer driver first name is cut to this length in a message.
MAX_BRAND_NAME = 30
MAX_DRIVER_FIRST_NAME = 20
# the partner API's plate (partners/wire.py): up to 32 characters
MAX_PLATE = 32
# E.164: "+" and at most 15 digits
MAX_SUPPORT_PHONE = 16
# TRANSFERS_PUBLIC_BASE_URL of at most this many characters keeps every SMS within 3 segments, with the
# tracking token (22 characters, at most 32: bookings/tracking_link.py) and an opt-out token of at most
# MAX_OPTOUT_TOKEN characters (the /m/ page's)
MAX_BASE_URL = 40
MAX_OPTOUT_TOKEN = 48
# what a US or Canadian number's text ends with (docs/rules/messages.md#sending), counted in the SMS budget
STOP_SUFFIX = "\nReply STOP to opt out."


@dataclass(frozen=True, slots=True)
class MessageContext:
    """The facts of one message. ``pickup_local`` is aware, in the pickup airport's time zone (the
    traveller reads the airport's clock); ``previous_pickup_local`` is the pickup before it moved
    (``pickup_moved``); ``rating_url`` the rating page (``feedback``). ``support_phone`` None: the help
    line is left out. ``driver_first_name``/``driver_plate``/``vehicle``/``meeting_point``/places: shown
    when known."""

    brand_name: str
    reservation_no: str
    pickup_local: datetime
    airport_iata: str
    tracking_url: str
    optout_url: str
    airport_name: str | None = None
    support_phone: str | None = None
    driver_first_name: str | None = None
    driver_plate: str | None = None
    vehicle: str | None = None
    previous_pickup_local: datetime | None = None
    rating_url: str | None = None
    meeting_point: str | None = None
    pickup_place: str | None = None
    dropoff_place: str | None = None


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered message: an e-mail's subject (None for an SMS) and its plain-text body."""

    subject: str | None
    body: str
