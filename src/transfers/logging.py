"""Structured logging: one JSON object per line on stdout, with the request id bound in.

The access line (``log_request``, one per HTTP request, on the hottest path) goes through a logger of
its own that ``configure_logging`` builds once with structlog's public ``wrap_logger``: the same
processors (the same list object), level filter and output file as the configured loggers, so the
same line, byte for byte (tests/unit/test_access_line.py), without ``structlog.get_logger``'s lazy
proxy looking the global configuration up on every call.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import orjson
import structlog
import structlog.contextvars

from transfers.context import request_id_var

_SECRET_FIELDS = {"api_key", "authorization", "outbound_token", "signing_secret", "key", "token"}

# Capability URLs: the token in the path is the whole authorisation (the traveller's page, the driver
# page, the message opt-out page, the rating page), so a log keeps at most its first characters.
CAPABILITY_PATH_PREFIXES = ("/t/", "/d/", "/m/", "/r/")
TOKEN_CHARS_KEPT = 4
_PATH_FIELDS = ("path", "url")


def redact_path(path: str) -> str:
    """``path`` with a capability token cut to its first 4 characters: ``/d/AbCdEf.../events`` is logged as
    ``/d/AbCd…/events``. Any other path is returned as it is (a slice and a tuple lookup: the access line
    calls this for every request)."""
    if path[:3] not in CAPABILITY_PATH_PREFIXES:
        return path
    end = path.find("/", 3)
    end = len(path) if end < 0 else end
    if end - 3 <= TOKEN_CHARS_KEPT:
        return path
    return f"{path[: 3 + TOKEN_CHARS_KEPT]}…{path[end:]}"


def redact_url(url: str) -> str:
    """A URL (or a bare path) with any capability token in its path cut as ``redact_path`` does."""
    scheme = url.find("://")
    if scheme < 0:
        return redact_path(url)
    slash = url.find("/", scheme + 3)
    return url if slash < 0 else url[:slash] + redact_path(url[slash:])


def _add_request_id(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    request_id = request_id_var.get()
    if request_id and "request_id" not in event:
        event["request_id"] = request_id
    return event


def _drop_secrets(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for name in _SECRET_FIELDS & event.keys():
        event[name] = "[redacted]"
    for name in _PATH_FIELDS:  # a capability URL's token, in any line that names a path or a URL
        value = event.get(name)
        if isinstance(value, str):
            event[name] = redact_url(value)
    return event


def _orjson_text(event: Any, **kwargs: Any) -> str:
    """orjson instead of the standard library's json: one access line per request is on the
    hottest path (docs/operations/performance-history.md#profile). ``default`` (structlog's fallback, ``repr``-like)
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


# The access line's own logger (``configure_logging``): built once on the configuration's processors and
# file, so a request's line skips structlog's lazy proxy and its per-call lookup of the global configuration.
_access: Any = None
_unconfigured = structlog.get_logger("transfers.http")  # before ``configure_logging`` (a bare test app)


def log_request(
    method: str,
    path: str,
    status: int,
    duration_ms: float,
    client_id: int | None,
    partner_id: int | None,
    reservation_no: str | None,
) -> None:
    """The access line, one per HTTP request: ``info("request", method=..., ..., reservation_no=...)``
    on the access logger (module docstring)."""
    (_access or _unconfigured).info(
        "request",
        method=method,
        path=path,
        status=status,
        duration_ms=duration_ms,
        client_id=client_id,
        partner_id=partner_id,
        reservation_no=reservation_no,
    )


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    global _access
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
    # The access logger: its own structlog logger, built here through structlog's public API on the same
    # processors list (so ``structlog.testing.capture_logs``, which edits that list in place, sees its lines
    # too), level filter and file as every other logger.
    _access = structlog.wrap_logger(
        structlog.WriteLogger(out), processors=processors, wrapper_class=wrapper, context_class=dict
    ).bind()
    logging.basicConfig(level=numeric, stream=sys.stdout, format="%(message)s")
    for noisy in ("uvicorn.access",):
        logging.getLogger(noisy).setLevel(logging.WARNING)
