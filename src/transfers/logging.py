"""Structured logging: one JSON object per line on stdout, with the request id bound in."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import orjson
import structlog

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


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    structlog.configure(
        processors=_processors(fmt),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # WriteLogger: the line and its newline in one write (PrintLogger's print() makes two: with
        # PYTHONUNBUFFERED, as containers run us, that is a second system call per access line).
        logger_factory=structlog.WriteLoggerFactory(file=sys.stdout),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=numeric, stream=sys.stdout, format="%(message)s")
    for noisy in ("uvicorn.access",):
        logging.getLogger(noisy).setLevel(logging.WARNING)
