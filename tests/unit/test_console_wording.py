"""Delivery errors in words, never a bare exception class name."""

from __future__ import annotations

import pytest

from transfers.console.wording import in_words


@pytest.mark.parametrize(
    ("stored", "status", "words"),
    [
        ("ClientConnectorError", None, "connection refused or host unreachable"),
        ("ConnectError", None, "connection refused or host unreachable"),
        (
            "ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed]",
            None,
            "connection refused",
        ),
        ("ClientConnectorDNSError", None, "host name not found"),
        ("ServerDisconnectedError", None, "closed the connection without answering"),
        ("ReadTimeout", None, "timed out waiting for the answer"),
        ("ConnectTimeout", None, "timed out while connecting"),
        ("ReadError", None, "connection reset while sending or reading"),
        ("no answer within 5s", None, "timed out after 5 s"),
        ("no answer within 2.5s", None, "timed out after 2.5 s"),
        ("HTTP 500", 500, "answered HTTP 500 (Internal Server Error)"),
        ("HTTP 503", None, "answered HTTP 503 (Service Unavailable)"),
        (None, 404, "answered HTTP 404 (Not Found)"),
        (None, None, "—"),
        ("SSRF guard: 10.0.0.1 is private", None, "refused by the SSRF guard: 10.0.0.1 is private"),
        ("delivery deadline passed", None, "delivery deadline passed"),
        ("answer is not JSON", 502, "answered HTTP 502 (Bad Gateway): answer is not JSON"),
        (
            "ClientConnectorError; gave up 24 h after the event",
            None,
            "connection refused or host unreachable; gave up 24 h after the event",
        ),
        (
            "HTTP 500; gave up 24 h after the event",
            500,
            "answered HTTP 500 (Internal Server Error); gave up 24 h after the event",
        ),
    ],
)
def test_stored_errors_read_as_words(stored: str | None, status: int | None, words: str) -> None:
    assert in_words(stored, status) == words
