"""Structured logging: one JSON object per line on stdout, with the request id bound in.

The access line (``log_request``, one per HTTP request, on the hottest path) is rendered without
structlog's per-call machinery while ``configure_logging``'s JSON configuration is the one in force:
the same event dictionary, keys in the same order, through the same time stamper, renderer and
writer, so the same line, byte for byte (tests/unit/test_access_line.py). Any other configuration
(the console format, ``structlog.testing.capture_logs``, a bound context variable) gets the line
from structlog itself.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import orjson
import structlog
import structlog.contextvars
from structlog._config import _CONFIG

from transfers.context import request_id_var

_SECRET_FIELDS = {"api_key", "authorization", "outbound_token", "signing_secret", "key", "token"}


def _add_request_id(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    request_id = request_id_var.get()
    if request_id and "request_id" not in event:
        event["request_id"] = request_id
    return event


def _drop_secrets(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for name in _SECRET_FIELDS & event.keys():
        event[name] = "[redacted]"
    return event


def _orjson_text(event: Any, **kwargs: Any) -> str:
    """orjson instead of the standard library's json: one access line per request is on the
    hottest path (bench/README.md, "Profile"). ``default`` (structlog's fallback, ``repr``-like)
    still handles values orjson cannot encode."""
    return orjson.dumps(event, default=kwargs.get("default")).decode()


def _processors(fmt: str) -> list[Any]:
    renderer: Any = (
        structlog.processors.JSONRenderer(serializer=_orjson_text) if fmt == "json" else structlog.dev.ConsoleRenderer()
    )
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_request_id,
        _drop_secrets,
        structlog.processors.format_exc_info,
        renderer,
    ]


def standalone_logger(fmt: str = "json", name: str = "transfers") -> Any:
    """A logger writing to stdout in the configured format, without touching structlog's global
    configuration: the CLI's last-resort error report uses it whether or not the command configured
    logging (and in a test process, where reconfiguring would redirect everyone's logs)."""
    return structlog.wrap_logger(structlog.PrintLogger(sys.stdout), processors=_processors(fmt), logger_name=name)


class _JsonLines:
    """What ``configure_logging`` set up for JSON, to write the access line as structlog would."""

    __slots__ = ("factory", "info", "processors", "renderer", "snapshot", "stamper", "wrapper", "writer")

    def __init__(self, processors: list[Any], wrapper: Any, factory: Any, out: Any, numeric: int) -> None:
        self.processors = processors
        self.snapshot = tuple(processors)
        self.wrapper = wrapper
        self.factory = factory
        self.stamper = processors[2]  # TimeStamper
        self.renderer = processors[-1]  # JSONRenderer
        self.writer = structlog.WriteLogger(out)  # the factory's own kind, on the same file (and its lock)
        self.info = numeric <= logging.INFO  # the filtering bound logger drops info below its level

    def in_force(self) -> bool:
        # structlog.get_config()'s values, read where it reads them (it builds a new dict per call)
        config = _CONFIG
        return (
            config.default_processors is self.processors
            and tuple(self.processors) == self.snapshot  # capture_logs edits the list in place
            and config.default_wrapper_class is self.wrapper
            and config.logger_factory is self.factory
            and config.default_context_class is dict
            and not structlog.contextvars._CONTEXT_VARS  # none ever bound: merge_contextvars adds nothing
        )


_json_lines: _JsonLines | None = None


def log_request(
    logger: Any,
    method: str,
    path: str,
    status: int,
    duration_ms: float,
    client_id: int | None,
    partner_id: int | None,
    reservation_no: str | None,
) -> None:
    """The access line: ``logger.info("request", method=..., ..., reservation_no=...)``, as structlog
    writes it (module docstring). ``logger`` is an unbound structlog logger (no context of its own)."""
    lines = _json_lines
    if lines is None or not lines.in_force():
        logger.info(
            "request",
            method=method,
            path=path,
            status=status,
            duration_ms=duration_ms,
            client_id=client_id,
            partner_id=partner_id,
            reservation_no=reservation_no,
        )
        return
    if not lines.info:
        return
    # the keywords in order, then what the processors add: event, level, timestamp, request id
    event: dict[str, Any] = {
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": duration_ms,
        "client_id": client_id,
        "partner_id": partner_id,
        "reservation_no": reservation_no,
        "event": "request",
        "level": "info",
    }
    lines.stamper(None, "info", event)
    request_id = request_id_var.get()
    if request_id:
        event["request_id"] = request_id
    lines.writer.msg(lines.renderer(None, "info", event))


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    global _json_lines
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    processors = _processors(fmt)
    wrapper = structlog.make_filtering_bound_logger(numeric)
    # WriteLogger: the line and its newline in one write (PrintLogger's print() makes two: with
    # PYTHONUNBUFFERED, as containers run us, that is a second system call per access line).
    out = sys.stdout
    factory = structlog.WriteLoggerFactory(file=out)
    structlog.configure(
        processors=processors,
        wrapper_class=wrapper,
        logger_factory=factory,
        cache_logger_on_first_use=True,
    )
    _json_lines = _JsonLines(processors, wrapper, factory, out, numeric) if fmt == "json" else None
    logging.basicConfig(level=numeric, stream=sys.stdout, format="%(message)s")
    for noisy in ("uvicorn.access",):
        logging.getLogger(noisy).setLevel(logging.WARNING)
