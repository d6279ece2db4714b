"""The per-call bookkeeping of a search's fan-out gives what the general code gives: signatures equal to
``hmac.new``'s, webhook ids drawn in bulk shaped as one drawn alone, partner-call metrics equal to
prometheus_client's own ``inc``/``observe`` on fresh metrics, a health tally equal to ``Tally.add``'s,
and a prepared call's header lines equal to its headers written out."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import math
import os
import re
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from transfers.context import request_id_var
from transfers.db.tables import SEARCH_OUTCOMES
from transfers.delivery.transport import CallResult
from transfers.observability.metrics import PARTNER_BUCKETS, count_partner_call, observe_partner_call
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.health import HealthBuffer, Tally, minute_of
from transfers.partners.http11 import UnusableRequest, header_lines
from transfers.partners.signing import SECRET_PREFIX, new_signing_secret, sign, signature_headers, webhook_ids


@pytest.mark.parametrize("key_bytes", [0, 1, 24, 32, 63, 64, 65, 100, 300])
def test_a_signature_is_hmac_sha256_of_id_timestamp_and_body_whatever_the_key_s_length(key_bytes: int) -> None:
    key = os.urandom(key_bytes)
    secret = SECRET_PREFIX + base64.b64encode(key).decode()
    for body in (b"", b"{}", os.urandom(55), os.urandom(56), os.urandom(64), os.urandom(1000)):
        for _ in range(2):  # the second time from the remembered keyed states
            want = hmac.new(key, b"msg_abc.1800000000." + body, hashlib.sha256).digest()
            assert sign(secret, "msg_abc", 1_800_000_000, body) == "v1," + base64.b64encode(want).decode()


def test_webhook_ids_drawn_together_are_shaped_as_one_drawn_alone_and_all_differ() -> None:
    alone = signature_headers(SECRET_PREFIX + base64.b64encode(b"k" * 32).decode(), b"{}")["webhook-id"]
    together = webhook_ids(16)
    assert len(together) == 16 and len(set(together)) == 16
    assert all(re.fullmatch(r"msg_[0-9a-f]{32}", wid) for wid in [alone, *together])
    assert webhook_ids(1) != webhook_ids(1)


def _samples(registry: CollectorRegistry | None, partner: str, call: str) -> dict[tuple[str, str], float]:
    """``name``, ``le`` (or ``outcome``) -> value of every sample of the two partner metrics for ``partner``."""
    found: dict[tuple[str, str], float] = {}
    for family in (registry or REGISTRY).collect():
        for sample in family.samples:
            if sample.labels.get("partner") == partner and sample.labels.get("call") == call:
                tag = sample.labels.get("le") or sample.labels.get("outcome") or ""
                found[(sample.name, tag)] = sample.value
    return found


def test_partner_call_metrics_are_the_library_s_own_counts_and_buckets() -> None:
    """The same series, names and values as ``Counter.inc()`` and ``Histogram.observe()`` give, on
    every bucket bound, between bounds, past the last, at zero, below zero and for NaN."""
    registry = CollectorRegistry()
    calls = Counter("partner_calls", "", ["partner", "call", "outcome"], registry=registry)
    durations = Histogram(
        "partner_call_duration_seconds", "", ["partner", "call"], registry=registry, buckets=PARTNER_BUCKETS
    )
    partner = "counting-partner"
    cases = [0.0, -3.0, 49.99, 50.0, 50.01, 100.0, 250.0, 999.99, 1000.0, 1000.01, 30000.0, 30000.5, 1e9, 12.34]
    outcomes = ["ok", "timeout", "ok", "invalid"]
    for index, ms in enumerate(cases):
        outcome = outcomes[index % len(outcomes)]
        count_partner_call(partner, "search", outcome, ms)
        calls.labels(partner, "search", outcome).inc()
        durations.labels(partner, "search").observe(ms / 1000)
    observe_partner_call(partner, "/booking/search", "ok", 70.0)  # the path-named entry counts the same series
    calls.labels(partner, "search", "ok").inc()
    durations.labels(partner, "search").observe(0.07)
    ours, theirs = _samples(None, partner, "search"), _samples(registry, partner, "search")
    assert ours.keys() == theirs.keys() and len(ours) > 10
    for key, value in theirs.items():
        assert math.isclose(ours[key], value, rel_tol=0, abs_tol=1e-12), key

    nan_partner = "counting-partner-nan"  # NaN: counted, added to the sum, in no bucket (as ``observe`` does)
    count_partner_call(nan_partner, "search", "ok", math.nan)
    nan = _samples(None, nan_partner, "search")
    assert nan[("partner_calls_total", "ok")] == 1 and math.isnan(nan[("partner_call_duration_seconds_sum", "")])
    assert nan[("partner_call_duration_seconds_bucket", "+Inf")] == 0


def test_a_recorded_call_is_tallied_as_tally_add_tallies_it() -> None:
    now = datetime(2026, 11, 26, 13, 45, 12, tzinfo=UTC)
    buffer = HealthBuffer()
    want = Tally()
    for index, ms in enumerate([0.0, -5.0, 0.4, 0.5, 49.6, 50.0, 99.5, 250.0, 1000.0, 1e7]):
        outcome = ["ok", "timeout", "invalid", "connect_error"][index % 4]
        buffer.record(7, outcome, ms, now)
        want.add(SEARCH_OUTCOMES.index(outcome), max(0, round(ms)))
    assert buffer.take() == {(7, minute_of(now)): want}


def _endpoint(outbound: str = "ot_abc", previous: bool = False) -> PartnerEndpoint:
    return PartnerEndpoint(
        partner_id=3,
        name="lines",
        base_url="http://127.0.0.1:9/",
        outbound_token=outbound,
        signing_secret=new_signing_secret(),
        previous_signing_secret=new_signing_secret() if previous else None,
        previous_until=datetime.now(UTC) + timedelta(hours=1) if previous else None,
    )


@pytest.mark.parametrize("request_id", ["", "req_123", "r" * 200])
@pytest.mark.parametrize("has_payload", [True, False])
@pytest.mark.parametrize("previous", [False, True])
def test_a_prepared_call_s_header_lines_are_its_headers_written_out(
    request_id: str, has_payload: bool, previous: bool
) -> None:
    """``PreparedCall.head_lines`` (a search's batch) writes exactly what ``header_lines`` writes for
    ``PreparedCall.headers`` (every other call, ``PartnerClient.send``): names, values, order; the
    signature made once, by ``prepare``."""
    partner = _endpoint(previous=previous)
    token = request_id_var.set(request_id)
    try:
        prepared = PartnerClient.prepare(
            partner, "POST", "/booking/search", b'{"a":1}', has_payload=has_payload, webhook_id="msg_" + "0" * 32
        )
        assert prepared.url == "http://127.0.0.1:9/booking/search" and prepared.body == b'{"a":1}'
        lines, headers = prepared.head_lines(), prepared.headers()
        assert lines == header_lines(headers)
        assert list(headers)[:5] == ["Authorization", "Accept", "webhook-id", "webhook-timestamp", "webhook-signature"]
        assert headers["Authorization"] == "Bearer ot_abc" and headers["webhook-id"] == "msg_" + "0" * 32
        assert ("Content-Type" in headers) is has_payload and ("X-Request-ID" in headers) is bool(request_id)
        assert len(prepared.signature[2].split()) == (2 if previous else 1)
        assert prepared.headers() == headers  # signed once: the same signature every time it is asked
    finally:
        request_id_var.reset(token)


@pytest.mark.parametrize(("token", "request_id"), [("ot\r\nX-Injected: 1", ""), ("ot", "req\nX: 1"), ("ot\r", "")])
def test_a_line_break_leaves_the_batch_s_lines_to_the_transport_s_refusal(token: str, request_id: str) -> None:
    partner = _endpoint(token)
    reset = request_id_var.set(request_id)
    try:
        prepared = PartnerClient.prepare(partner, "POST", "/booking/search", b"{}")
        assert prepared.head_lines() is None
        with pytest.raises(UnusableRequest, match="line break in a header value"):
            header_lines(prepared.headers())
    finally:
        request_id_var.reset(reset)


@pytest.mark.parametrize(
    "values",
    [
        ("ok", 200, {"vehicles": []}, None, 12.5, b'{"vehicles":[]}'),
        ("timeout", None, None, "no answer within 1s", 1000.0, None),
        ("http_error", 503, None, "HTTP 503", 3.25, b"down"),
        ("invalid", 200, None, "answer is not JSON", 0.0, b"<html>"),
    ],
)
def test_a_call_result_made_positionally_is_the_one_made_by_name(values: tuple[object, ...]) -> None:
    """``CallResult`` is a ``rows.frozen_value`` (its own cheaper ``__init__``): positional or by name, the
    same fields, equal, printed alike (``raw`` left out), and still frozen."""
    names = [f.name for f in dataclasses.fields(CallResult)]
    made, built = CallResult(*values), CallResult(**dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
    assert type(made) is CallResult and made == built and repr(made) == repr(built)
    assert [getattr(made, n) for n in names] == list(values) == [getattr(built, n) for n in names]
    assert "raw" not in repr(made) and CallResult(*values[:5]).raw is None  # type: ignore[arg-type]
    assert made.ok is built.ok and made.excerpt == built.excerpt
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.outcome = "ok"  # type: ignore[misc]
