"""Prometheus metrics at GET /metrics (hardening issue item 4; RELIABILITY-TESTS L6, B5) and the
request id sent to partners, over real HTTP.

The session's service and the tests share one process (one registry) and one database, so every
check compares a value before and after the action it causes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from transfers.db.engine import Database
from transfers.db.tables import bookings, outbox

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(http: httpx.AsyncClient) -> Samples:
    response = await http.get("/metrics")
    assert response.status_code == 200
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_metrics_are_served_without_auth_in_text_format(http: httpx.AsyncClient) -> None:
    response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    for name, kind in [
        ("http_requests_total", "counter"),
        ("http_request_duration_seconds", "histogram"),
        ("partner_calls_total", "counter"),
        ("partner_call_duration_seconds", "histogram"),
        ("wallet_refusals_total", "counter"),
        ("bookings_created_total", "counter"),
        ("outbox_pending", "gauge"),
        ("outbox_oldest_pending_age_seconds", "gauge"),
        ("bookings_total", "gauge"),
        ("webhook_deliveries_pending", "gauge"),
        ("webhook_oldest_pending_age_seconds", "gauge"),
    ]:
        assert f"# TYPE {name} {kind}" in text, name
    assert "_created" not in text.replace("bookings_created_total", "")  # no *_created series
    assert "metrics_database_scrape_ok 1.0" in text
    assert "/metrics" not in (await http.get("/openapi.json")).text  # operational, not in the API document


async def test_requests_are_labelled_by_route_template(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    reservation = f"TB-{uuid.uuid4().hex[:8].upper()}"
    junk = f"/api/v1/no-such-{uuid.uuid4().hex}"
    before = await scrape(http)
    assert (await http.get(junk)).status_code == 404
    assert (await http.get(BOOKING, params={"reservation_no": reservation}, headers=bearer(key))).status_code == 422
    assert (await http.get(f"/api/v1/reverse/booking/info/{reservation}")).status_code == 401
    assert (await http.post("/healthz")).status_code == 405
    after = await scrape(http)
    expected = [
        ("unmatched", "GET", "404"),
        (BOOKING, "GET", "422"),
        ("/api/v1/reverse/booking/info/{reservation_no}", "GET", "401"),
        ("/healthz", "POST", "405"),
    ]
    for route, method, status in expected:
        labels = {"route": route, "method": method, "status": status}
        assert value(after, "http_requests_total", **labels) == value(before, "http_requests_total", **labels) + 1
        count = {"route": route, "method": method}
        assert value(after, "http_request_duration_seconds_count", **count) >= 1
    text = (await http.get("/metrics")).text
    assert junk not in text and reservation not in text  # raw paths never become label values


async def test_partner_calls_by_outcome_and_request_id_forwarded(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    tag = uuid.uuid4().hex[:8]
    good, _, _ = await make_partner(airports=("NCL",), name=f"good-{tag}")
    bad, _, _ = await make_partner(
        airports=("NCL",), name=f"bad-{tag}", mode="garbage", garbage={"vehicles": [{"id": "x", "price": "-1"}]}
    )
    slow, _, _ = await make_partner(airports=("NCL",), name=f"slow-{tag}", mode="hang")
    down, _, _ = await make_partner(airports=("NCL",), name=f"down-{tag}", mode="status", status_code=503)
    _, key = await make_client()
    request_id = f"trace-{tag}"
    before = await scrape(http)
    response = await http.post(
        SEARCH,
        json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "NCL"}),
        headers={**bearer(key), "X-Request-ID": request_id},
    )
    assert response.status_code == 200, response.text
    assert response.headers["x-request-id"] == request_id
    assert {v["vehicle_id"] for v in response.json()["vehicles"]}  # the good partner's vehicles
    after = await scrape(http)
    for partner, outcome in [(good, "ok"), (bad, "invalid"), (slow, "timeout"), (down, "http_error")]:
        labels = {"partner": partner.name, "call": "search", "outcome": outcome}
        assert value(after, "partner_calls_total", **labels) == value(before, "partner_calls_total", **labels) + 1
        total = sum(
            v
            for (name, lbl), v in after.items()
            if name == "partner_calls_total" and dict(lbl).get("partner") == partner.name
        )
        assert total == 1, partner.name  # one count per call, with its final outcome
        timing = {"partner": partner.name, "call": "search"}
        assert value(after, "partner_call_duration_seconds_count", **timing) == 1
        (call,) = partner.calls("/booking/search")
        assert call.headers["x-request-id"] == request_id  # the caller's id travels to every partner
    slow_sum = value(after, "partner_call_duration_seconds_sum", partner=slow.name, call="search")
    assert 0.9 <= slow_sum <= 3.0  # the 1 s deadline of the test settings


async def test_booking_counters_and_database_gauges(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    partner, _, _ = await make_partner(airports=("EDI",), name=f"counters-{uuid.uuid4().hex[:8]}")
    _, rich = await make_client(balance="500.00")
    _, poor = await make_client(balance="0.00")
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "EDI"})
    before = await scrape(http)

    found = (await http.post(SEARCH, json=body, headers=bearer(rich))).json()
    create = {**bearer(rich), "Idempotency-Key": f"m-{uuid.uuid4().hex}"}
    booked = await http.post(BOOKING, json=booking_body(found["search_id"], 1), headers=create)
    assert booked.status_code == 200, booked.text
    replay = await http.post(BOOKING, json=booking_body(found["search_id"], 1), headers=create)
    assert replay.headers.get("idempotent-replayed") == "true"

    found = (await http.post(SEARCH, json=body, headers=bearer(poor))).json()
    refuse = {**bearer(poor), "Idempotency-Key": f"m-{uuid.uuid4().hex}"}
    for _ in range(2):  # the second answer is a replay and is not counted again
        refused = await http.post(BOOKING, json=booking_body(found["search_id"], 1), headers=refuse)
        assert refused.status_code == 422 and refused.json()["code"] == 1101
    refused = await http.post(BOOKING, json=booking_body(found["search_id"], 1), headers=bearer(poor))
    assert refused.json()["code"] == 1101  # without a key: the route's error handler path

    after = await scrape(http)
    assert value(after, "bookings_created_total") == value(before, "bookings_created_total") + 1
    assert value(after, "wallet_refusals_total") == value(before, "wallet_refusals_total") + 2
    # the create delivery (outbox dispatcher, within the request's budget) is counted once, by its outcome
    assert value(after, "partner_calls_total", partner=partner.name, call="create", outcome="ok") == 1
    assert value(after, "partner_call_duration_seconds_count", partner=partner.name, call="create") == 1

    async with db.read() as conn:
        rows = (await conn.execute(select(bookings.c.status, func.count()).group_by(bookings.c.status))).all()
        by_status = {str(status): int(count) for status, count in rows}
        pending = (await conn.execute(select(func.count()).where(outbox.c.status == "pending"))).scalar_one()
    for status in (
        "PENDING",
        "PENDING_APPROVAL",
        "APPROVED",
        "CANCELLED",
        "FAILED",
        "DECLINED",
        "COMPLETED",
        "REFUNDED",
    ):
        assert value(after, "bookings_total", status=status) == by_status.get(status, 0), status
    assert value(after, "outbox_pending") == pending
    assert value(after, "outbox_oldest_pending_age_seconds") >= 0


MULTIPROCESS_WORKER = """
from transfers.observability.metrics import observe_partner_call, HTTP_REQUESTS
observe_partner_call("mp-partner", "/booking/create", "ok", 120.0)
HTTP_REQUESTS.labels("/healthz", "GET", "200").inc()
"""
MULTIPROCESS_SCRAPE = """
from transfers.observability.metrics import render
body, content_type = render("", [])
print(content_type)
print(body.decode())
"""


def test_multiprocess_mode_aggregates_every_worker(tmp_path: Path) -> None:
    """With PROMETHEUS_MULTIPROC_DIR, what two worker processes counted is served by any process."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", MULTIPROCESS_WORKER], env=env, check=True, timeout=60)  # noqa: S603
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-c", MULTIPROCESS_SCRAPE],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    ).stdout
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(out.split("\n", 1)[1])
        for s in f.samples
    }
    assert value(samples, "partner_calls_total", partner="mp-partner", call="create", outcome="ok") == 2
    assert value(samples, "partner_call_duration_seconds_count", partner="mp-partner", call="create") == 2
    assert value(samples, "http_requests_total", route="/healthz", method="GET", status="200") == 2
