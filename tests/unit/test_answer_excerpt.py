"""The answer excerpt kept on every delivery attempt (``partners.client.answer_excerpt``): bounded to
500 characters, UTF-8 with bad bytes replaced, control characters other than newline and tab gone."""

from __future__ import annotations

from transfers.partners.client import EXCERPT_CHARS, CallResult, answer_excerpt


def test_a_short_body_is_kept_whole_and_a_long_one_cut_at_500_characters() -> None:
    assert answer_excerpt(b'{"status":"PENDING"}') == '{"status":"PENDING"}'
    assert answer_excerpt(b"") == ""
    body = ("é" * 300 + "x" * 700).encode()
    cut = answer_excerpt(body)
    assert EXCERPT_CHARS == 500 and len(cut) == 500 and cut == ("é" * 300 + "x" * 200)


def test_four_byte_characters_cut_at_the_prefix_end_never_show_a_replacement_character() -> None:
    for lead in range(4):  # shift the prefix end through every position inside a 4-byte character
        body = ("a" * lead + "😀" * 600).encode()
        cut = answer_excerpt(body)
        assert len(cut) == 500 and "\ufffd" not in cut and cut == ("a" * lead + "😀" * 600)[:500]


def test_undecodable_bytes_are_replaced_and_control_characters_removed() -> None:
    assert answer_excerpt(b"ok\xff\xfe!") == "ok\ufffd\ufffd!"
    assert answer_excerpt(b"a\tb\nc\r\x00d\x1b[31me\x7f\xc2\x85f") == "a\tb\ncd[31mef"


def test_removed_control_characters_do_not_shorten_the_excerpt() -> None:
    body = b"\x00" * 5000 + b"y" * 800  # the first prefix decodes to nothing but removed characters
    assert answer_excerpt(body) == "y" * 500
    assert answer_excerpt(b"\x01" * 3000) == ""


def test_a_call_result_has_an_excerpt_only_when_an_http_answer_came() -> None:
    assert CallResult("ok", 200, {}, None, 1.0, b'{"a":1}').excerpt == '{"a":1}'
    assert CallResult("http_error", 503, None, "HTTP 503", 1.0, b"<h1>down</h1>").excerpt == "<h1>down</h1>"
    assert CallResult("timeout", None, None, "no answer", 1.0).excerpt is None
    assert CallResult("ok", None, {}, None, 0.0).excerpt is None  # hosted partner: nothing over HTTP
    assert "raw" not in repr(CallResult("ok", 200, {}, None, 1.0, b"secret-ish"))
