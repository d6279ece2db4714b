"""The gettext catalogs (docs/rules/messages.md#catalogs): every text extracted from the code is in the
template and translated in every language with the same placeholders; a missing or broken translation
falls back to the English text, never to an empty one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from tests.unit.test_message_texts import context
from transfers.i18n import catalogs
from transfers.i18n.languages import LANGUAGES
from transfers.messages.text import MessageContext, render
from transfers.messages.text import wording as w
from transfers.messages.text.segments import is_gsm7

ROOT = Path(__file__).resolve().parents[2]
I18N = ROOT / "src" / "transfers" / "i18n"
TRANSLATED = [language for language in LANGUAGES if language != "en"]
PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _ids(path: Path) -> set[tuple[str | None, str]]:
    with path.open("rb") as file:
        return {(message.context, str(message.id)) for message in read_po(file) if message.id}


def test_the_template_holds_every_text_of_the_code() -> None:
    with (ROOT / "babel.cfg").open(encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found = {
        (str(context) if context else None, str(message))
        for _, _, message, _, context in extract_from_dir(
            str(ROOT),
            method_map,
            options_map,
            keywords={
                "N_": None,
                "words": None,
                "in_context": ((1, "c"), 2),
                "_": None,
                "gettext": None,
                "ngettext": (1, 2),
            },
        )
        if isinstance(message, str)
    }
    assert found == _ids(I18N / "messages.pot"), "run `make catalogs`"


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_text_is_translated_with_the_same_placeholders(language: str) -> None:
    with (I18N / "locale" / language / "LC_MESSAGES" / "messages.po").open("rb") as file:
        catalog = read_po(file)
    assert {(m.context, str(m.id)) for m in catalog if m.id} == _ids(I18N / "messages.pot")
    for message in catalog:
        if not message.id:
            continue
        assert message.string, f"{language}: {message.id!r} is not translated"
        assert not message.fuzzy, f"{language}: {message.id!r} is fuzzy"
        assert sorted(PLACEHOLDER.findall(str(message.string))) == sorted(PLACEHOLDER.findall(str(message.id))), (
            language,
            message.id,
        )


SMS_WORDS = [
    w.SMS_REMINDER,
    w.SMS_DRIVER_CHANGED,
    w.SMS_PICKUP_MOVED,
    w.SMS_DRIVER_ARRIVED,
    w.SMS_DRIVER_ARRIVED_UNNAMED,
    w.SMS_CANCELLED,
    w.SMS_DRIVER,
    w.SMS_PLATE,
    w.SMS_TRACK,
    w.SMS_HELP,
    w.SMS_OPTOUT,
]


@pytest.mark.parametrize("language", ["en", "de", "fr", "it", "nl"])
def test_sms_texts_are_written_in_the_gsm_alphabet_where_the_language_allows(language: str) -> None:
    # Spanish and Portuguese need letters the alphabet lacks (á, í, ã, ç): their SMS lose the accents at send
    gettext = catalogs.translations(language).gettext
    for words in SMS_WORDS:
        assert is_gsm7(gettext(words)), (language, gettext(words))


def _catalog_without(language: str, removed: str) -> str:
    """A language's ``.po`` with one translation emptied (as a new text arrives from `make catalogs`)."""
    text = catalogs.po_text(language)
    with (I18N / "locale" / language / "LC_MESSAGES" / "messages.po").open("rb") as file:
        translated = next(str(m.string) for m in read_po(file) if m.id == removed)
    assert translated in text
    return text.replace(f'msgstr "{translated}"', 'msgstr ""')


def test_a_missing_translation_falls_back_to_english(monkeypatch: pytest.MonkeyPatch) -> None:
    german = catalogs.translations("de")
    before = render("reminder", "sms", "de", context()).body
    assert "Erinnerung" in before and "Hilfe: +441415550100" in before
    patched = catalogs.compile_po(_catalog_without("de", w.SMS_HELP))
    monkeypatch.setattr(catalogs, "translations", lambda language: patched if language == "de" else german)
    after = render("reminder", "sms", "de", context()).body
    assert "Erinnerung" in after  # the rest stays German
    assert "Help: +441415550100" in after  # the missing line in English, not empty
    assert "Hilfe" not in after


def test_a_translation_with_a_broken_placeholder_falls_back_to_english(monkeypatch: pytest.MonkeyPatch) -> None:
    text = catalogs.po_text("fr").replace('msgstr "Aide : %(phone)s"', 'msgstr "Aide : %(telephone)s"')
    patched = catalogs.compile_po(text)
    monkeypatch.setattr(catalogs, "translations", lambda language: patched)
    body = render("cancelled", "sms", "fr", context()).body
    assert "Help: +441415550100" in body and "annul" in body


def test_every_language_renders_differently_from_english() -> None:
    ctx: MessageContext = context()
    english = render("confirmed", "email", "en", ctx)
    for language in TRANSLATED:
        rendered = render("confirmed", "email", language, ctx)
        assert rendered.subject != english.subject and rendered.body != english.body, language
