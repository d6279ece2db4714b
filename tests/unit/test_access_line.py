"""transfers.logging.log_request: the access line, written by the access logger ``configure_logging`` builds
(structlog's public ``wrap_logger``), is the line the configured structlog loggers write, byte for byte, in
every format, level, ``capture_logs`` and bound context variable."""

from __future__ import annotations

import datetime as real_datetime
import io
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import structlog
import structlog.contextvars
import structlog.processors
from structlog.testing import capture_logs

from transfers import logging as transfers_logging
from transfers.context import request_id_var
from transfers.logging import configure_logging, log_request

LINES = [
    ("POST", "/api/v1/booking-api/search", 200, 4.56, 7, None, None),
    ("GET", "/api/v1/booking-api/booking", 404, 0.0, 7, None, "TR-1"),
    ("GET", '/api/v1/reverse/booking/ünïcode "quoted"', 499, 12345.5, None, 3, None),
    ("POST", "/x", 500, 0.01, None, None, None),
]


class _FrozenDatetime(real_datetime.datetime):
    moment = real_datetime.datetime(2026, 11, 26, 10, 0, 0, 123456, tzinfo=real_datetime.UTC)

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return cls.moment


@pytest.fixture
def out(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """configure_logging writing to a buffer at a frozen time; structlog's configuration restored after."""
    saved = structlog.get_config()
    buffer = io.StringIO()
    monkeypatch.setattr(
        structlog.processors, "datetime", SimpleNamespace(datetime=_FrozenDatetime, timezone=real_datetime.timezone)
    )
    try:
        yield buffer
    finally:
        structlog.configure(**saved)
        transfers_logging._access = None


def configure(buffer: io.StringIO, level: str, fmt: str) -> None:
    """configure_logging with the buffer as stdout (pytest puts its own back between fixture and test)."""
    real = sys.stdout
    sys.stdout = buffer
    try:
        configure_logging(level, fmt)
    finally:
        sys.stdout = real


def both(buffer: io.StringIO, *fields: Any) -> tuple[str, str]:
    """The line log_request writes and the one structlog writes for the same fields."""
    start = buffer.tell()
    log_request(*fields)
    mine = buffer.getvalue()[start:]
    method, path, status, duration_ms, client_id, partner_id, reservation_no = fields
    structlog.get_logger("transfers.http").info(
        "request",
        method=method,
        path=path,
        status=status,
        duration_ms=duration_ms,
        client_id=client_id,
        partner_id=partner_id,
        reservation_no=reservation_no,
    )
    return mine, buffer.getvalue()[start + len(mine) :]


@pytest.mark.parametrize("microsecond", [123456, 0])
def test_the_access_line_is_structlogs_byte_for_byte(out: io.StringIO, microsecond: int) -> None:
    _FrozenDatetime.moment = _FrozenDatetime.moment.replace(microsecond=microsecond)
    configure(out, "INFO", "json")
    assert transfers_logging._access is not None  # the access logger is the one writing
    for request_id in (None, "trace-1"):
        token = request_id_var.set(request_id)
        try:
            for fields in LINES:
                mine, structlogs = both(out, *fields)
                assert mine == structlogs and mine.endswith("}\n")
        finally:
            request_id_var.reset(token)
    assert out.getvalue().splitlines()[-1] == (
        '{"method":"POST","path":"/x","status":500,"duration_ms":0.01,"client_id":null,"partner_id":null,'
        '"reservation_no":null,"event":"request","level":"info","timestamp":"2026-11-26T10:00:00'
        + (".123456" if microsecond else "")
        + 'Z","request_id":"trace-1"}'
    )


def test_below_its_level_no_access_line(out: io.StringIO) -> None:
    configure(out, "WARNING", "json")
    mine, structlogs = both(out, *LINES[0])
    assert mine == structlogs == ""


def test_the_console_format_and_capture_logs_see_the_access_line(out: io.StringIO) -> None:
    configure(out, "INFO", "console")
    mine, structlogs = both(out, *LINES[0])
    assert mine == structlogs != "" and not mine.startswith("{")
    configure(out, "INFO", "json")
    with capture_logs() as captured:
        log_request(*LINES[1])
    assert captured == [
        {
            "method": "GET",
            "path": "/api/v1/booking-api/booking",
            "status": 404,
            "duration_ms": 0.0,
            "client_id": 7,
            "partner_id": None,
            "reservation_no": "TR-1",
            "event": "request",
            "log_level": "info",
        }
    ]


def test_a_bound_context_variable_is_in_the_line(out: io.StringIO) -> None:
    configure(out, "INFO", "json")
    structlog.contextvars.clear_contextvars()  # this test's bindings only
    with structlog.contextvars.bound_contextvars(tenant="acme"):
        mine, structlogs = both(out, *LINES[0])
    assert mine == structlogs and '"event":"request","tenant":"acme","level":"info"' in mine
