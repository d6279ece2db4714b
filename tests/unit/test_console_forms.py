"""What the console makes of typed values and page links (console/forms.py): bounded, trimmed, never
an exception for anything a browser (or a hand-edited address) can send."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from transfers.console.forms import day, decode_cursor, encode_cursor, positive_id, text


def test_a_cursor_round_trips_and_a_tampered_one_is_just_unknown() -> None:
    moment = datetime(2026, 11, 23, 17, 30, 12, 345678, tzinfo=UTC)
    cursor = encode_cursor(moment, 42)
    assert decode_cursor(cursor) == (moment, 42)
    for bad in (
        None,
        "",
        "x" * 101,
        "%%%",
        "bm90IGEgY3Vyc29y",
        encode_cursor(moment, 42)[:-3] + "!!!",
        "MjAyNi0xMS0yM1QxNzozMDoxMnwtMQ",
        "MjAyNi0xMS0yM3w0Mg",
        12,
        "\x00",
    ):
        assert decode_cursor(bad) is None, bad


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  Lovelace ", ("Lovelace", None)),
        (None, ("", None)),
        (12, ("", None)),
        ("a\x00b", ("ab", None)),
        ("x" * 201, ("x" * 200, "At most 200 characters.")),
    ],
)
def test_text_is_trimmed_bounded_and_never_holds_a_nul(value: object, expected: tuple[str, str | None]) -> None:
    assert text(value, limit=200) == expected


def test_ids_and_days() -> None:
    assert positive_id(" 7 ") == (7, None)
    assert positive_id("") == (None, None)
    for bad in ("0", "-1", "1.5", "1e3", "9" * 30, "７"):
        assert positive_id(bad) == (None, "Choose one from the list."), bad
    assert day("2026-12-31") == (date(2026, 12, 31), None)
    assert day("2026-02-30") == (None, "A date like 2026-12-31.")
    assert day(None) == (None, None)
