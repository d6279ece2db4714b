"""The service's Prometheus metrics and their exposition.

Process metrics (counters and histograms) live in prometheus_client's default registry, one per
process. With several uvicorn workers set ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's own
variable, read by the library when it is imported) to an empty directory writable by every worker:
each process then writes its samples there and ``/metrics`` aggregates all of them.

Database gauges (outbox backlog, bookings by status) are not kept in processes at all: they are
computed by one query each at scrape time, so every process answers the same numbers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import structlog
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

log = structlog.get_logger("transfers.metrics")

# ``*_created`` series double every counter's cardinality and tell an operator nothing here.
disable_created_metrics()  # type: ignore[no-untyped-call]

UNMATCHED = "unmatched"
CLIENT_CLOSED_REQUEST = 499  # the status a request is counted under when its caller left mid-body (as nginx logs it)

HTTP_REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and method.",
    ["route", "method"],
)
PARTNER_CALLS = Counter(
    "partner_calls_total",
    "Outbound partner calls by partner name, call (search, create, update, info) and outcome "
    "(ok, timeout, connect_error, blocked, http_error, invalid, too_large, redirect).",
    ["partner", "call", "outcome"],
)
PARTNER_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0)  # seconds
PARTNER_DURATION = Histogram(
    "partner_call_duration_seconds",
    "Duration of outbound partner calls, by partner and call.",
    ["partner", "call"],
    buckets=PARTNER_BUCKETS,
)
WALLET_REFUSALS = Counter(
    "wallet_refusals_total",
    "Booking creations refused for an insufficient wallet balance (1101).",
)
BOOKINGS_CREATED = Counter("bookings_created_total", "Bookings created (first answers, not replays).")
REQUEST_LOG_DROPPED = Counter(
    "request_log_dropped_total",
    "Client API requests left out of the request log: its in-process buffer was full "
    "(docs/rules/agency-portal.md#request-log).",
)
REQUEST_LOG_BATCHES = Counter(
    "request_log_batches_total",
    "Batches of the request log written to the database (one transaction each): with "
    "request_log_written_total, the mean batch (up to 500).",
)
REQUEST_LOG_WRITTEN = Counter("request_log_written_total", "Client API requests written to the request log.")
PASSWORD_CHECKS = Counter(
    "signin_password_checks_total",
    "Passwords checked against their argon2 hash at sign-in (docs/operations/security.md#sign-in).",
)
SIGNIN_REFUSED = Counter(
    "signin_refused_total",
    "Sign-ins refused before any password check: reason address (too many attempts a minute from the "
    "client address) or locked (too many failures for the e-mail from that address).",
    ["reason"],
)


def partner_call_name(path: str) -> str:
    """``/booking/info/TB-X`` -> ``info``: a bounded label from a partner API path."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] == "booking" and parts[2] in ("search", "create", "update", "info"):
        return parts[2]
    return "other"


# (metric, label values) -> its labelled child. Bounded: every caller labels with route templates,
# HTTP methods and statuses, registered partners' names and call names, never raw input.
_SERIES: dict[tuple[Counter | Histogram, tuple[str, ...]], Any] = {}


def series(metric: Counter | Histogram, *values: str) -> Any:
    """``metric.labels(*values)``, looked up once: ``labels()`` validates and takes a lock on every
    call, a few per request (docs/operations/performance-history.md#profile)."""
    key = (metric, values)
    child = _SERIES.get(key)
    if child is None:
        child = _SERIES[key] = metric.labels(*values)
    return child


# (partner, call, outcome) -> the labelled children a call's observation updates: the counter's and the
# duration histogram's. Bounded as ``_SERIES``.
_PARTNER_SERIES: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def observe_partner_call(partner: str, path: str, outcome: str, duration_ms: float) -> None:
    """``count_partner_call`` for the call ``path`` is (``partner_call_name``)."""
    count_partner_call(partner, partner_call_name(path), outcome, duration_ms)


def count_partner_call(partner: str, call: str, outcome: str, duration_ms: float) -> None:
    """``partner_calls_total`` + 1 and ``partner_call_duration_seconds`` observes the duration, ten
    times per 10-partner search: through the children ``labels()`` gave, looked up once per
    (partner, call, outcome), and their own ``inc()`` and ``observe()``."""
    key = (partner, call, outcome)
    found = _PARTNER_SERIES.get(key)
    if found is None:
        found = _PARTNER_SERIES[key] = (series(PARTNER_CALLS, *key), series(PARTNER_DURATION, partner, call))
    found[0].inc()
    found[1].observe(duration_ms / 1000)


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class _Scrape(Collector):
    """One scrape: the process (or multiprocess) samples plus the gauges computed for it."""

    def __init__(self, source: Iterable[Collector], extra: list[Metric]) -> None:
        self._source = list(source)
        self._extra = extra

    def collect(self) -> Iterator[Metric]:
        for collector in self._source:
            yield from collector.collect()
        yield from self._extra


def render(accept: str, extra: list[Metric]) -> tuple[bytes, str]:
    """The exposition body and its content type (text 0.0.4 unless the scraper asks otherwise)."""
    source: list[Collector]
    directory = multiprocess_dir()
    if directory:
        from prometheus_client import multiprocess

        aggregated = CollectorRegistry()
        multiprocess.MultiProcessCollector(aggregated, path=directory)  # type: ignore[no-untyped-call]
        source = [aggregated]
    else:
        source = [REGISTRY]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Scrape(source, extra))
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


def database_families(
    *,
    pending: int,
    oldest_pending: datetime | None,
    now: datetime,
    bookings_by_status: dict[str, int],
    statuses: Iterable[str],
    ok: bool,
    webhooks_pending: int = 0,
    oldest_webhook: datetime | None = None,
) -> list[Metric]:
    families: list[Metric] = [
        GaugeMetricFamily(
            "metrics_database_scrape_ok",
            "1 when the database gauges below were read at this scrape.",
            value=1 if ok else 0,
        )
    ]
    if not ok:
        return families
    age = max(0.0, (now - oldest_pending).total_seconds()) if oldest_pending is not None else 0.0
    families.append(
        GaugeMetricFamily("outbox_pending", "Outbox messages not yet delivered (status pending).", value=pending)
    )
    families.append(
        GaugeMetricFamily(
            "outbox_oldest_pending_age_seconds", "Age of the oldest pending outbox message (0 when none).", value=age
        )
    )
    by_status = GaugeMetricFamily(
        "bookings_total", "Stored bookings by status (read at scrape time).", labels=["status"]
    )
    for status in sorted({*statuses, *bookings_by_status}):
        by_status.add_metric([status], bookings_by_status.get(status, 0))
    families.append(by_status)
    # client webhook deliveries waiting (a dead endpoint keeps its deliveries here for 24 h)
    families.append(
        GaugeMetricFamily(
            "webhook_deliveries_pending",
            "Client webhook deliveries not yet delivered (status pending).",
            value=webhooks_pending,
        )
    )
    families.append(
        GaugeMetricFamily(
            "webhook_oldest_pending_age_seconds",
            "Age of the oldest pending client webhook delivery (0 when none).",
            value=max(0.0, (now - oldest_webhook).total_seconds()) if oldest_webhook is not None else 0.0,
        )
    )
    return families
