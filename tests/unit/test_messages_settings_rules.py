"""The rules of a client's message settings (docs/rules/messages.md#settings), every bad input refused
with the field named and nothing changed; the good ones kept in their stored form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from transfers.errors import Invalid
from transfers.messages.models import Channel, MessageSettings
from transfers.messages.settings_rules import MessageSettingsInvalid, SettingsChange, changed

NOW = datetime(2030, 5, 1, 9, 30, tzinfo=UTC)
BLANK = MessageSettings(client_id=5)
BRANDED = MessageSettings(client_id=5, brand_name="Sunny Trips")


def refused(change: SettingsChange, current: MessageSettings = BRANDED) -> MessageSettingsInvalid:
    with pytest.raises(MessageSettingsInvalid) as caught:
        changed(current, change, NOW)
    assert isinstance(caught.value, Invalid)
    return caught.value


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("S", "S"),
        ("  Sunny Trips  ", "Sunny Trips"),
        ("x" * 30, "x" * 30),
        ("Voyages Élégants ✈ 東京", "Voyages Élégants ✈ 東京"),
    ],
)
def test_a_brand_name_of_1_to_30_characters(typed: str, kept: str) -> None:
    assert changed(BLANK, SettingsChange(brand_name=typed), NOW).brand_name == kept


@pytest.mark.parametrize(
    "typed", ["", "   ", "x" * 31, "é" * 31, "Sunny\u202eTrips", "Sunny\nTrips", "Sunny\x00", "\u2066A"]
)
def test_a_bad_brand_name_is_refused(typed: str) -> None:
    assert refused(SettingsChange(brand_name=typed)).field == "brand_name"


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("ABC", "ABC"),
        ("Sunny Trips", "Sunny Trips"),
        ("a1b2c3d4e5f", "a1b2c3d4e5f"),
        ("1A2", "1A2"),
        ("", None),
        ("  ", None),
    ],
)
def test_an_sms_sender(typed: str, kept: str | None) -> None:
    assert changed(BRANDED, SettingsChange(sms_sender=typed), NOW).sms_sender == kept


@pytest.mark.parametrize(
    "typed",
    [
        "AB",
        "A" * 12,
        "Sunny-Trips",
        "Sunny.Trips",
        "Sunny!",
        "Sunny_Trips",
        "12345",
        "123 456",
        "Süßtrips",
        "Sunny\tT",
        "+4479",
    ],
)
def test_a_bad_sms_sender_is_refused(typed: str) -> None:
    assert refused(SettingsChange(sms_sender=typed)).field == "sms_sender"


def test_reply_to_and_support_phone() -> None:
    after = changed(BRANDED, SettingsChange(reply_to=" Help@Sunny.example ", support_phone="0044 20 7946 0555"), NOW)
    assert after.reply_to == "Help@sunny.example"  # the domain normalized, the local part kept
    assert after.support_phone == "+442079460555"
    cleared = changed(after, SettingsChange(reply_to="", support_phone=""), NOW)
    assert (cleared.reply_to, cleared.support_phone) == (None, None)


@pytest.mark.parametrize(
    "typed", ["not-an-email", "a@", "@b.example", "a b@c.example", "a@b.example\u202e", "x" * 330 + "@b.example"]
)
def test_a_bad_reply_to_is_refused(typed: str) -> None:
    assert refused(SettingsChange(reply_to=typed)).field == "reply_to"


@pytest.mark.parametrize("typed", ["020 7946 0555", "+44 CALL ME", "+1", "+99912345678", "phone"])
def test_a_bad_support_phone_is_refused(typed: str) -> None:
    error = refused(SettingsChange(support_phone=typed))
    assert error.field == "support_phone" and error.message.startswith("support_phone: ")


@pytest.mark.parametrize(("typed", "kept"), [("de", "de"), ("DE", "de"), (" nl ", "nl"), ("pt", "pt")])
def test_a_default_language_of_the_seven(typed: str, kept: str) -> None:
    assert changed(BRANDED, SettingsChange(default_language=typed), NOW).default_language == kept


@pytest.mark.parametrize("typed", ["", "xx", "ja", "pt-BR", "english", "de_DE", "ελ"])
def test_an_unsupported_default_language_is_refused(typed: str) -> None:
    assert refused(SettingsChange(default_language=typed)).field == "default_language"


def test_channels_and_consent() -> None:
    email = changed(BRANDED, SettingsChange(channels=["email"]), NOW)
    assert email.channels == (Channel.EMAIL,) and email.travellers_consented_at is None
    # sms without the confirmation: refused
    assert refused(SettingsChange(channels=["email", "sms"]), email).field == "channels"
    both = changed(email, SettingsChange(channels=["sms", " Email "], travellers_consented=True), NOW)
    assert both.channels == (Channel.EMAIL, Channel.SMS) and both.travellers_consented_at == NOW
    # the consent, given again, keeps its first time; turning sms off and on again needs no new one
    later = NOW + timedelta(days=1)
    again = changed(both, SettingsChange(travellers_consented=True), later)
    assert again.travellers_consented_at == NOW
    off = changed(again, SettingsChange(channels=[]), later)
    assert off.channels == () and off.travellers_consented_at == NOW
    assert changed(off, SettingsChange(channels=["sms"]), later).channels == (Channel.SMS,)
    # the consent alone turns nothing on
    consented = changed(BRANDED, SettingsChange(travellers_consented=True), NOW)
    assert consented.channels == () and consented.travellers_consented_at == NOW


@pytest.mark.parametrize("names", [["fax"], ["email", "whatsapp"], ["e-mail"], ["SMS;email"]])
def test_an_unknown_channel_is_refused(names: list[str]) -> None:
    assert refused(SettingsChange(channels=names)).field == "channels"


def test_messages_need_a_brand_name() -> None:
    assert refused(SettingsChange(channels=["email"]), BLANK).field == "brand_name"
    assert refused(SettingsChange(feedback=True), BLANK).field == "brand_name"
    on = changed(BLANK, SettingsChange(channels=["email"], brand_name="Sunny", feedback=True), NOW)
    assert on.feedback and on.email_on
    # and the brand cannot be emptied while they are on (empty is refused anyway)
    assert refused(SettingsChange(brand_name=""), on).field == "brand_name"
    assert changed(on, SettingsChange(feedback=False), NOW).feedback is False


def test_a_refusal_names_the_first_bad_field_and_nothing_partial_comes_back() -> None:
    error = refused(SettingsChange(brand_name="Fine", sms_sender="no!"))
    assert error.field == "sms_sender" and "letters" in error.reason
    assert BRANDED.brand_name == "Sunny Trips"
