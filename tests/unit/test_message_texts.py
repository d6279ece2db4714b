"""The messages to travellers as they are written (docs/rules/messages.md#templates): each template on its
channels in every language says the brand first, the reservation number, the pickup in the airport's
local date and 24-hour time, the tracking and opt-out links and the support phone (left out when there is
none); ``driver_arrived`` the driver's first name and plate; never a price, a partner, the passenger's own
address or anything to sell; every SMS within 3 segments with the longest values."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from transfers.bookings.tracking_link import TOKEN_MAX_LENGTH
from transfers.i18n.dates import clock, long_date, short_date
from transfers.i18n.languages import LANGUAGES
from transfers.messages import optout_link
from transfers.messages.sms import senders
from transfers.messages.text import CHANNELS, MessageContext, render
from transfers.messages.text.context import (
    MAX_BASE_URL,
    MAX_BRAND_NAME,
    MAX_DRIVER_FIRST_NAME,
    MAX_OPTOUT_TOKEN,
    MAX_PLATE,
    MAX_SUPPORT_PHONE,
    STOP_SUFFIX,
)
from transfers.messages.text.segments import MAX_SEGMENTS, count, is_gsm7, to_gsm7

PAIRS = [(template, channel) for template, channels in CHANNELS.items() for channel in channels]
LONDON = ZoneInfo("Europe/London")
PICKUP = datetime(2026, 12, 5, 9, 5, tzinfo=LONDON)  # a Saturday: "sáb" in Spanish and Portuguese


def context(**changes: object) -> MessageContext:
    ctx = MessageContext(
        brand_name="Sunny Trips",
        reservation_no="TB-ABCDEFGHJK",
        pickup_local=PICKUP,
        airport_iata="GLA",
        airport_name="Glasgow International Airport",
        tracking_url="https://transfers.example/t/" + "t" * 22,
        optout_url="https://transfers.example/m/" + "o" * 22,
        support_phone="+441415550100",
        driver_first_name="Morag",
        driver_plate="SK21 ABC",
        vehicle="Mercedes E-Class",
        previous_pickup_local=datetime(2026, 12, 5, 8, 20, tzinfo=LONDON),
        rating_url="https://transfers.example/r/" + "r" * 35,
        meeting_point="Arrivals hall, by the information desk",
        pickup_place="Glasgow Airport (GLA)",
        dropoff_place="George Square, Glasgow",
    )
    return dataclasses.replace(ctx, **changes)  # type: ignore[arg-type]


def longest(language: str) -> MessageContext:
    """The longest values a message is sized for (docs/rules/messages.md#templates)."""
    base = "https://" + "b" * (MAX_BASE_URL - len("https://"))
    return context(
        brand_name="W" * MAX_BRAND_NAME,
        reservation_no="TB-WWWWWWWWWW",
        # a Wednesday in September: the longest weekday and month names in most of the languages
        pickup_local=datetime(2026, 9, 30, 23, 55, tzinfo=LONDON),
        previous_pickup_local=datetime(2026, 9, 29, 23, 50, tzinfo=LONDON),
        tracking_url=f"{base}/t/{'T' * TOKEN_MAX_LENGTH}",
        optout_url=f"{base}/m/{'O' * MAX_OPTOUT_TOKEN}",
        support_phone="+" + "9" * (MAX_SUPPORT_PHONE - 1),
        driver_first_name="W" * (MAX_DRIVER_FIRST_NAME + 10),  # cut to the maximum
        driver_plate="W" * MAX_PLATE,
    )


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("template", "channel"), PAIRS)
def test_every_message_says_what_it_must(template: str, channel: str, language: str) -> None:
    ctx = context()
    rendered = render(template, channel, language, ctx)
    body = rendered.body
    assert body.startswith("Sunny Trips")  # the brand opens every message
    if channel == "email":
        assert rendered.subject is not None and rendered.subject.startswith("Sunny Trips")
        assert long_date(PICKUP, language) in body
    else:
        assert rendered.subject is None
        assert to_gsm7(short_date(PICKUP, language)) in body
    assert clock(PICKUP, language) in body
    for shown in ("TB-ABCDEFGHJK", ctx.tracking_url, ctx.optout_url, "+441415550100"):
        assert shown in body, shown
    if template == "driver_arrived":
        assert "Morag" in body and "SK21 ABC" in body
    if template == "feedback":
        assert ctx.rating_url is not None and ctx.rating_url in body
    if template == "pickup_moved":
        assert clock(datetime(2026, 12, 5, 8, 20, tzinfo=LONDON), language) in body  # what it was
    assert "%(" not in body and "%s" not in body and "\n\n\n" not in body


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("template", "channel"), PAIRS)
def test_without_a_support_phone_the_line_is_left_out(template: str, channel: str, language: str) -> None:
    with_phone = render(template, channel, language, context()).body
    without = render(template, channel, language, context(support_phone=None)).body
    assert "+441415550100" not in without
    assert len(without.splitlines()) < len(with_phone.splitlines())  # the whole line, not an empty value
    assert not re.search(r":\s*$", without, re.MULTILINE) or channel == "email"


# A price, a partner, the passenger's own address or number, promotions: in none of the languages.
NEVER = re.compile(
    r"€|\$|£|(?-i:\b(EUR|GBP|USD)\b)|\bprice|\bprix|preis|precio|prezzo|preço|prijs|discount|rabatt|réduction|descuento|"
    r"sconto|desconto|korting|\boffer|angebot|offre|oferta|offerta|aanbieding|partner|promo(tion|ción|zione|ção|tie)?\b|@",
    re.IGNORECASE,
)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("template", "channel"), PAIRS)
def test_never_a_price_a_partner_an_address_or_a_promotion(template: str, channel: str, language: str) -> None:
    rendered = render(template, channel, language, context())
    for text in (rendered.subject or "", rendered.body):
        assert NEVER.search(text) is None, (NEVER.search(text), text)


def test_a_message_context_holds_nothing_a_message_may_not_say() -> None:
    names = {field.name for field in dataclasses.fields(MessageContext)}
    assert names == {
        "brand_name",
        "reservation_no",
        "pickup_local",
        "airport_iata",
        "airport_name",
        "tracking_url",
        "optout_url",
        "support_phone",
        "driver_first_name",
        "driver_plate",
        "vehicle",
        "previous_pickup_local",
        "rating_url",
        "meeting_point",
        "pickup_place",
        "dropoff_place",
    }


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("template", "channel"), [pair for pair in PAIRS if pair[1] == "sms"])
def test_every_sms_fits_three_segments_with_the_longest_values(template: str, channel: str, language: str) -> None:
    body = render(template, channel, language, longest(language)).body + STOP_SUFFIX
    segments = count(body)
    assert is_gsm7(body), body
    assert segments.count <= MAX_SEGMENTS, (segments, body)


def test_the_stop_line_counted_is_the_one_sent() -> None:
    assert STOP_SUFFIX == senders.FOOTER


def test_the_opt_out_links_fit_the_length_counted() -> None:
    # a signature, the channel's letter and the booking's id (messages/optout_link.py)
    assert optout_link.SIGNATURE_LENGTH + 1 + optout_link.MAX_ID_DIGITS <= MAX_OPTOUT_TOKEN
    assert optout_link.OPTOUT_PATH == "/m/"


def test_a_long_driver_first_name_is_cut() -> None:
    body = render("driver_arrived", "sms", "en", context(driver_first_name="Maximiliana-Josefina-Theodora")).body
    assert "Maximiliana-Josefin " in body or "Maximiliana-Josefina" in body
    assert "Theodora" not in body


def test_an_sms_is_always_in_the_gsm_alphabet() -> None:
    body = render("driver_arrived", "sms", "pt", context(driver_first_name="João", brand_name="Viagens Açores")).body
    assert is_gsm7(body)
    assert "Joao" in body and body.startswith("Viagens Acores")


def test_a_template_on_a_channel_it_does_not_go_on_is_refused() -> None:
    with pytest.raises(ValueError, match="confirmed"):
        render("confirmed", "sms", "en", context())
    with pytest.raises(ValueError, match="driver_arrived"):
        render("driver_arrived", "email", "en", context())
    with pytest.raises(ValueError, match="nonsense"):
        render("nonsense", "email", "en", context())
    with pytest.raises(ValueError, match="rating"):
        render("feedback", "email", "en", context(rating_url=None))


def test_an_unknown_language_is_written_in_english() -> None:
    assert render("reminder", "sms", "sv", context()).body == render("reminder", "sms", "en", context()).body


def test_the_driver_arrived_sms_without_a_known_name() -> None:
    body = render("driver_arrived", "sms", "en", context(driver_first_name=None)).body
    assert "your driver is at the pickup point" in body and "SK21 ABC" in body
