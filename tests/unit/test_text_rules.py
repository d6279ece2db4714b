"""docs/rules/booking.md#text: the one rule of the characters a name or a free text may hold, class by class."""

from __future__ import annotations

import pytest

from tests.helpers import ONE_LINE_ONLY, REFUSED_CHARACTERS
from transfers.text import refused_character, without_refused

# Every code point of each refused range, not only the samples the HTTP tests send.
REFUSED_RANGES = [
    *range(0x00, 0x09),
    0x0B,
    0x0C,
    *range(0x0E, 0x20),
    *range(0x7F, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x2028,
    0x2029,
]


@pytest.mark.parametrize("point", REFUSED_RANGES, ids=lambda p: f"U+{p:04X}")
def test_every_refused_code_point_is_refused_on_one_line_and_in_free_text(point: int) -> None:
    value = f"Ada{chr(point)}Lovelace"
    assert refused_character(value) == f"U+{point:04X}"
    assert refused_character(value, multiline=True) == f"U+{point:04X}"


@pytest.mark.parametrize("value", list(ONE_LINE_ONLY.values()), ids=list(ONE_LINE_ONLY))
def test_line_breaks_and_tabs_only_in_free_text(value: str) -> None:
    assert refused_character(value) is not None
    assert refused_character(value, multiline=True) is None


@pytest.mark.parametrize("value", list(REFUSED_CHARACTERS.values()), ids=list(REFUSED_CHARACTERS))
def test_each_sample_class_is_refused(value: str) -> None:
    assert refused_character(value) is not None and refused_character(value, multiline=True) is not None


@pytest.mark.parametrize(
    "value",
    [
        "Ada Lovelace",
        "Zoë O'Brien-Núñez",
        "\u05db\u05d4\u05df\u200f",  # Hebrew with a right-to-left mark
        "\u0639\u0644\u064a\u061c",  # Arabic with its letter mark
        "\u200eLTR mark",
        "山田 太郎",
        "😀 👶",
        "\u00a0no-break space",  # U+00A0: just past the C1 range
        "\u202fnarrow no-break space",  # U+202F: just past the overrides
        "\u206aafter the isolates",  # U+206A: just past the isolates
    ],
)
def test_real_names_pass(value: str) -> None:
    assert refused_character(value) is None


def test_the_note_is_cleaned_keeping_its_lines() -> None:
    assert without_refused("a\u202eb\x1bc\x85d\r\n\te\u2029") == "abcd\r\n\te"
