"""Messages to travellers, the pure parts (docs/rules/messages.md#languages): the passenger's language tag
kept normalized or dropped (never an error), the language a message is written in, the masks, the keys."""

from __future__ import annotations

import pytest

from transfers.i18n.languages import LANGUAGES, message_language, primary_language
from transfers.messages.addresses import mask, mask_email, mask_phone, normalize_tag
from transfers.messages.models import (
    TEMPLATE_CHANNELS,
    Channel,
    MessageSettings,
    Template,
    dedupe_key,
    ordered_channels,
)


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("de", "de"),
        ("pt-br", "pt-BR"),
        ("PT_BR", "pt-BR"),
        (" fr-CA ", "fr-CA"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("es-419", "es-419"),
        ("de-DE-1996", "de-DE-1996"),
        ("en-US-u-ca-gregory", "en-US-u-ca-gregory"),
        ("ja", "ja"),  # a real language the messages do not speak: kept, written in the default
        ("xx", None),  # well formed, no such language
        ("x-private", None),
        ("i-klingon", None),
        ("en-", None),
        ("-en", None),
        ("en--US", None),
        ("e", None),
        ("english", None),
        ("de-" + "a" * 40, None),
        ("a" * 200, None),
        ("", None),
        ("   ", None),
        ("dé", None),
        ("де", None),
        ("en\u202e", None),
        (None, None),
        (123, None),
        (True, None),
        (["en"], None),
        ({"tag": "en"}, None),
    ],
)
def test_a_passenger_language_is_kept_normalized_or_dropped(typed: object, kept: str | None) -> None:
    assert normalize_tag(typed) == kept


def test_a_kept_tag_fits_its_column() -> None:
    longest = "de-" + "-".join(["abcdefgh"] * 3) + "-x-abc"
    kept = normalize_tag(longest)
    assert kept is not None and len(kept) <= 35
    assert normalize_tag(longest + "-abcdefgh") is None  # 44 characters: over RFC 5646's 35


@pytest.mark.parametrize(
    ("passenger", "default", "language"),
    [
        ("pt-BR", None, "pt"),
        ("pt-BR", "de", "pt"),
        ("NL-be", "de", "nl"),
        ("ja", "de", "de"),
        ("ja", None, "en"),
        (None, "fr", "fr"),
        ("not a tag", "it", "it"),
        (None, None, "en"),
        (None, "xx", "en"),
        ("", "es", "es"),
    ],
)
def test_the_language_of_a_message(passenger: str | None, default: str | None, language: str) -> None:
    assert message_language(passenger, default) == language
    assert language in LANGUAGES


def test_primary_language_only_names_the_seven() -> None:
    assert [primary_language(t) for t in ("de-AT", "en", "sv", None, "")] == ["de", "en", None, None, None]


def test_masks() -> None:
    assert mask_phone("+447911123456") == "+44 7*** ***456"
    assert mask_phone("+12025550123") == "+1 2*** ***123"
    assert mask_phone("+33612345678") == "+33 6*** ***678"
    assert mask_phone(None) is None
    assert "1234" not in (mask_phone("+4912345") or "")
    assert mask_email("alice@example.com") == "a***@example.com"
    assert mask_email("a@b.example") == "a***@b.example"
    assert mask_email("no-at-sign") == "***"
    assert mask("sms", "+447911123456") == "+44 7*** ***456"
    assert mask("email", "bob@example.org") == "b***@example.org"


def test_keys_and_channels() -> None:
    assert dedupe_key(12, Template.PICKUP_MOVED, Channel.SMS, "2030-05-03T10:00:00+00:00") == (
        "12:pickup_moved:sms:2030-05-03T10:00:00+00:00"
    )
    assert ordered_channels(["sms", "email", "fax"]) == (Channel.EMAIL, Channel.SMS)
    assert ordered_channels(None) == ()
    assert TEMPLATE_CHANNELS[Template.DRIVER_ARRIVED] == {Channel.SMS}
    assert TEMPLATE_CHANNELS[Template.FEEDBACK] == {Channel.EMAIL}
    assert set(TEMPLATE_CHANNELS) == set(Template)


def test_settings_default_to_off() -> None:
    settings = MessageSettings(client_id=3)
    assert not settings.email_on and not settings.sms_on and not settings.feedback
    assert settings.resource() == {
        "client_id": 3,
        "channels": [],
        "brand_name": None,
        "sms_sender": None,
        "reply_to": None,
        "support_phone": None,
        "default_language": None,
        "feedback": False,
        "travellers_consented_at": None,
        "updated_at": None,
    }
