"""Ask every partner serving the airport at once; keep whoever answers well within the deadline.

Latency is the slowest good answer or the deadline, never the sum. A partner that is slow, down,
answers an error, or answers something that fails the wire contract (including a vehicle type not
in the reference data) is left out of this search and logged with the reason.

The calls are one ``call_batch.CallBatch``: no task, timer or semaphore per partner; each
call judged when all are over or the deadline passed, its duration measured when it ended.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import structlog
from pydantic import ValidationError

from transfers.delivery.transport import CallResult
from transfers.observability.metrics import count_partner_call, partner_call_name
from transfers.partners.call_batch import CallBatch
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.health import HealthBuffer
from transfers.partners.models import PartnerRecord
from transfers.partners.wire import NUL_FREE_SEARCH_ANSWER, WireSearchAnswer, WireVehicle

log = structlog.get_logger("transfers.search")
SEARCH_PATH = "/booking/search"
SEARCH_CALL = partner_call_name(SEARCH_PATH)  # the metrics' call label, named once


@dataclass(frozen=True)
class PartnerAnswer:
    partner: PartnerRecord
    vehicles: list[WireVehicle]
    distance_km: int | None


async def ask_partners(
    client: PartnerClient,
    partners: list[tuple[PartnerRecord, PartnerEndpoint]],
    payload: dict[str, Any],
    *,
    timeout: float,
    vehicle_types: Set[str],
    max_vehicles: int,
    health: HealthBuffer | None = None,
    now: datetime | None = None,
) -> list[PartnerAnswer]:
    """``health``/``now``: count every call's judged outcome and duration for partner health
    (partners/health.py), in the minute of ``now`` (the search's start)."""
    if not partners:
        return []
    body = orjson.dumps(payload)  # the same bytes to every partner: serialised once, not per call
    batch = CallBatch(client, timeout)
    for _, endpoint in partners:
        batch.call(endpoint, SEARCH_PATH, payload, body)
    results = await batch.results()
    counted = health if now is not None else None
    answers = []
    for (record, endpoint), result in zip(partners, results, strict=True):
        answer = _judged(record, endpoint, result, vehicle_types, max_vehicles, counted, now)
        if answer is not None:
            answers.append(answer)
    return answers


def _judged(
    record: PartnerRecord,
    endpoint: PartnerEndpoint,
    result: CallResult,
    vehicle_types: Set[str],
    max_vehicles: int,
    health: HealthBuffer | None,
    now: datetime | None,
) -> PartnerAnswer | None:
    if not result.ok:
        count_partner_call(endpoint.name, SEARCH_CALL, result.outcome, result.duration_ms)  # metrics
        if health is not None and now is not None:
            health.record(record.partner_id, result.outcome, result.duration_ms, now)
        return None  # the client already logged the transport outcome
    answer, reason = validated(result.body, result.raw)
    if answer is not None:
        unknown = {v.type for v in answer.vehicles} - vehicle_types
        if len(answer.vehicles) > max_vehicles:
            reason = f"{len(answer.vehicles)} vehicles, more than {max_vehicles}"
        elif unknown:
            reason = f"vehicle types not in the reference data: {sorted(unknown)[:5]}"
    # metrics: one count per call, with the final judgement (a contract breach is "invalid")
    judged = "ok" if reason is None and answer is not None else "invalid"
    count_partner_call(endpoint.name, SEARCH_CALL, judged, result.duration_ms)
    if health is not None and now is not None:  # partner health: counted where the call is judged
        health.record(record.partner_id, judged, result.duration_ms, now)
    if reason is not None or answer is None:
        log.warning("partner_answer_rejected", partner=record.name, partner_id=record.partner_id, reason=reason)
        return None
    return PartnerAnswer(record, answer.vehicles, answer.distance_km)


def validated(parsed: Any, raw: bytes | None = None) -> tuple[WireSearchAnswer | None, str | None]:
    """The answer (parsed by orjson in the client), or why it breaks the contract. Validating the
    bytes with pydantic's own parser (``model_validate_json``) instead was measured
    (docs/operations/performance-history.md#search-sixth-pass): 9 % fewer instructions per answer, but pydantic's parser
    reads ``NaN``, ``Infinity``, ``1e400`` and integers past ``2**64 - 1`` where orjson refuses them or reads a float,
    and a check of the bytes for those cost more than the saving; tests/unit/test_search_answer_bytes.py
    pins the judgement of those edges.

    ``raw``: the bytes ``parsed`` was read from. Without a ``\\u0000`` in them no text of the answer holds
    a NUL (orjson refuses a control character written raw in a string, and ``\\u0000`` is the only way
    to write a NUL), so the texts' NUL checks can only pass: the answer goes through
    ``wire.NUL_FREE_SEARCH_ANSWER``, the model's schema without them and without Python callbacks (a
    quarter of the instructions, docs/operations/performance-history.md#search-seventh-pass). Any other answer (a
    ``\\u0000`` anywhere, even in an ignored field or escaped as text) takes the model itself. The backslash is
    looked for first: a one-byte search, and most answers have none."""
    try:
        if raw is not None and (b"\\" not in raw or b"\\u0000" not in raw):
            return NUL_FREE_SEARCH_ANSWER.validate_python(parsed), None
        return WireSearchAnswer.model_validate(parsed), None
    except ValidationError as exc:
        return None, f"answer breaks the contract: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"
