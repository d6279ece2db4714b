"""SMS segments as the networks count them (docs/rules/messages.md#templates): GSM-7 160/153 septets with
the extension table at two, UCS-2 70/67 code units, and ``to_gsm7``'s nearest letters. Hand-counted."""

from __future__ import annotations

import pytest

from transfers.messages.text.segments import count, is_gsm7, to_gsm7


@pytest.mark.parametrize(
    ("text", "encoding", "units", "segments"),
    [
        ("", "GSM-7", 0, 0),
        ("a" * 160, "GSM-7", 160, 1),
        ("a" * 161, "GSM-7", 161, 2),
        ("a" * 306, "GSM-7", 306, 2),
        ("a" * 307, "GSM-7", 307, 3),
        ("a" * 459, "GSM-7", 459, 3),
        ("a" * 460, "GSM-7", 460, 4),
        ("€" * 80, "GSM-7", 160, 1),  # the extension table: escape + character
        ("€" * 81, "GSM-7", 162, 2),
        ("a" * 152 + "€" + "a" * 10, "GSM-7", 164, 2),  # the escape pair moves whole to segment 2 (154 + 10)
        ("a" * 152 + "€" + "a" * 152, "GSM-7", 306, 3),  # 152 | 2 + 151 | 1: the pair is never split
        ("Grüße aus Málaga", "UCS-2", 16, 1),  # á is not in the GSM alphabet (à is)
        ("á" * 70, "UCS-2", 70, 1),
        ("á" * 71, "UCS-2", 71, 2),
        ("á" * 134, "UCS-2", 134, 2),
        ("á" * 135, "UCS-2", 135, 3),
        ("😀" * 35, "UCS-2", 70, 1),  # a surrogate pair counts two
        ("a" * 66 + "😀", "UCS-2", 68, 1),
    ],
)
def test_segments_are_counted_as_the_networks_count_them(text: str, encoding: str, units: int, segments: int) -> None:
    found = count(text)
    assert (found.encoding, found.units, found.count) == (encoding, units, segments)


def test_a_surrogate_pair_is_never_split() -> None:
    assert count("a" * 66 + "😀" + "a" * 10).count == 2  # 78 units: 66 | 2 + 10 (not 67 + 11)
    assert count("a" * 67 + "a" * 67 + "😀").count == 3  # 67 | 67 | 2


def test_the_gsm_alphabet() -> None:
    assert is_gsm7("Hola, ¿dónde?") is False  # ó
    assert is_gsm7("Grüße, François? Ça va. Señor è à ù ì ò é É Ñ ß Æ ø @ £ $ ¥ ¡ ¿ § {} [] ~ | ^ € \\") is False
    assert is_gsm7("Grüße! Ça va. Señor è à ù ì ò é É Ñ ß Æ ø @ £ $ ¥ ¡ ¿ § {} [] ~ | ^ € \\") is True
    assert is_gsm7("line\nbreak\r") is True
    assert is_gsm7("tab\t") is False


def test_to_gsm7_writes_the_nearest_letters_and_keeps_what_fits() -> None:
    assert to_gsm7("sáb 5 dic, João, Lodź, Łukasz, garçon, «Olá», 9\u202fh, naïve, ê") == (
        'sab 5 dic, Joao, Lodz, Lukasz, garcon, "Ola", 9 h, naive, e'
    )
    assert to_gsm7("Grüße aus Zürich, Señor é") == "Grüße aus Zürich, Señor é"  # already GSM: unchanged
    assert to_gsm7("東京") == "??"  # no nearest letter
    assert is_gsm7(to_gsm7("Ünïcödé “quotes” — dash… 😀"))
