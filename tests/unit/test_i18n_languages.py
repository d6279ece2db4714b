"""Which language a traveller is spoken to in (docs/rules/messages.md#languages): a tag by its primary
subtag, ``Accept-Language`` by its q-values, and the page's order: ``?lang=``, the booking's, the
browser's, the client's default, English."""

from __future__ import annotations

import pytest

from transfers.i18n.languages import LANGUAGES, accept_language, message_language, page_language, primary_language


def test_the_seven_languages() -> None:
    assert LANGUAGES == ("en", "de", "fr", "es", "it", "pt", "nl")


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("pt-BR", "pt"),
        ("PT-br", "pt"),
        ("pt_BR", "pt"),
        ("de", "de"),
        ("en-GB", "en"),
        ("nl-BE", "nl"),
        ("zh-Hant-TW", None),  # a language the service does not speak
        ("sv", None),
        ("", None),
        (None, None),
        ("fr-", None),  # malformed
        ("f", None),
        ("fr fr", None),
        ("français", None),
        ("de-" + "x" * 40, None),  # longer than a tag may be
        ("12", None),
    ],
)
def test_a_tag_is_matched_by_its_primary_subtag(tag: str | None, language: str | None) -> None:
    assert primary_language(tag) == language


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("de-DE,de;q=0.9,en;q=0.8", "de"),
        ("sv-SE,sv;q=0.9,fr;q=0.5,en;q=0.4", "fr"),  # Swedish first, not spoken: the next by weight
        ("en;q=0.1, nl;q=0.8", "nl"),  # weights, not the header's order
        ("it;q=0.5, es;q=0.5", "it"),  # equal weights: the header's order
        ("pt-BR", "pt"),
        ("*", None),
        ("de;q=0, fr;q=0.001", "fr"),  # q=0: not acceptable
        ("de;q=abc, es", "es"),  # a malformed weight never wins
        ("de;q=1.5, es;q=0.2", "es"),
        ("  FR-ca ; q=0.7 ,", "fr"),
        ("", None),
        (None, None),
        (",,,;;;", None),
    ],
)
def test_accept_language_by_q_values(header: str | None, language: str | None) -> None:
    assert accept_language(header) == language


def test_a_messages_language() -> None:
    assert message_language("pt-BR", "de") == "pt"
    assert message_language("sv", "de") == "de"
    assert message_language("nonsense tag", None) == "en"
    assert message_language(None, "xx") == "en"


def test_the_pages_language_in_its_order() -> None:
    assert page_language("it", "pt-BR", "de", "fr") == "it"  # ?lang= first
    assert page_language("sv", "pt-BR", "de", "fr") == "pt"  # then the booking's
    assert page_language(None, None, "nl-NL,nl;q=0.9", "fr") == "nl"  # then the browser's
    assert page_language(None, "xx", "sv", "fr") == "fr"  # then the client's default
    assert page_language(None, None, None, None) == "en"
    assert page_language("<script>", None, "da", "") == "en"
