"""Ask every partner serving the airport at once; keep whoever answers well within the deadline.

Latency is the slowest good answer or the deadline, never the sum. A partner that is slow, down,
answers an error, or answers something that fails the wire contract (including a vehicle type not
in the reference data) is left out of this search and logged with the reason.

The calls are one ``client.CallBatch`` (issue 26): no task, timer or semaphore per partner; each
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
from transfers.observability.metrics import observe_partner_call
from transfers.partners.client import CallBatch, PartnerClient, PartnerEndpoint
from transfers.partners.health import HealthBuffer
from transfers.partners.models import PartnerRecord
from transfers.partners.wire import WireSearchAnswer, WireVehicle

log = structlog.get_logger("transfers.search")
SEARCH_PATH = "/booking/search"


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
        answer = _judged(client, record, endpoint, result, vehicle_types, max_vehicles, counted, now)
        if answer is not None:
            answers.append(answer)
    return answers


def _judged(
    client: PartnerClient,
    record: PartnerRecord,
    endpoint: PartnerEndpoint,
    result: CallResult,
    vehicle_types: Set[str],
    max_vehicles: int,
    health: HealthBuffer | None,
    now: datetime | None,
) -> PartnerAnswer | None:
    if result.ok and result.body is None and result.raw is not None and result.http_status is not None:
        answer, reason, not_json = validated(result.raw)
        if not_json:  # judged and logged as the client judges an answer that is not JSON
            result = client.not_json(result.http_status, result.duration_ms, endpoint, SEARCH_PATH, result.raw)
    else:  # an answer parsed already (a 2xx always comes unparsed from CallBatch), or a failed call
        answer, reason = _validated_parsed(result.body) if result.ok else (None, None)
    if not result.ok:
        observe_partner_call(endpoint.name, SEARCH_PATH, result.outcome, result.duration_ms)  # metrics
        if health is not None and now is not None:
            health.record(record.partner_id, result.outcome, result.duration_ms, now)
        return None  # the client already logged the transport outcome
    if answer is not None:
        unknown = {v.type for v in answer.vehicles} - vehicle_types
        if len(answer.vehicles) > max_vehicles:
            reason = f"{len(answer.vehicles)} vehicles, more than {max_vehicles}"
        elif unknown:
            reason = f"vehicle types not in the reference data: {sorted(unknown)[:5]}"
    # metrics: one count per call, with the final judgement (a contract breach is "invalid")
    judged = "ok" if reason is None and answer is not None else "invalid"
    observe_partner_call(endpoint.name, SEARCH_PATH, judged, result.duration_ms)
    if health is not None and now is not None:  # partner health: counted where the call is judged
        health.record(record.partner_id, judged, result.duration_ms, now)
    if reason is not None or answer is None:
        log.warning("partner_answer_rejected", partner=record.name, partner_id=record.partner_id, reason=reason)
        return None
    return PartnerAnswer(record, answer.vehicles, answer.distance_km)


def _validated_parsed(parsed: Any) -> tuple[WireSearchAnswer | None, str | None]:
    try:
        return WireSearchAnswer.model_validate(parsed), None
    except ValidationError as exc:
        return None, f"answer breaks the contract: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"


# For ``_risky``: digits read as "0", an exponent's "e"/"E" as "e", a "+" dropped, the rest a space.
_NUMBERS = bytes(ord("0") if chr(c).isdigit() and c < 128 else ord("e") if c in b"eE" else ord(" ") for c in range(256))
_LONG_RUN = b"0" * 20  # an integer past 2**64 - 1 (orjson: a float; pydantic: an int), or past a double


def _risky(raw: bytes) -> bool:
    """Whether the bytes may hold what pydantic's JSON parser reads otherwise than orjson: ``NaN``,
    ``Infinity`` or a number beyond a double's range (``1e400``, 400 digits), which orjson refuses and
    pydantic reads (to infinity or a big integer, kept or ignored), or an integer past ``2**64 - 1``,
    which orjson reads as a float and pydantic as an integer (an id ``12345678901234567890123`` is
    accepted as text from an integer, refused from a float). Such an answer is judged the old way.
    A cheap superset: an exponent of three digits or more, or a run of 20 digits (in a text too)."""
    if b"NaN" in raw or b"Infinity" in raw:
        return True
    numbers = raw.translate(_NUMBERS, b"+")
    return b"e000" in numbers or _LONG_RUN in numbers


def validated(raw: bytes) -> tuple[WireSearchAnswer | None, str | None, bool]:
    """``(answer, why not, not JSON)`` for a 2xx answer's bytes, exactly as ``orjson.loads`` then
    ``WireSearchAnswer.model_validate`` judge them (issue 26: pydantic's own JSON parser validating
    the bytes is cheaper, measured in bench/README.md). Whenever the bytes fail it, or may hold
    what the two parsers read differently (``_risky``), or are empty, they are judged the old way:
    so every refusal's text (``answer breaks the contract: <loc> <msg>``, "answer is not JSON") is
    the old one; tests/unit/test_search_answer_bytes.py pins the edges."""
    if raw and not _risky(raw):
        try:
            return WireSearchAnswer.model_validate_json(raw), None, False
        except ValidationError:
            pass  # judged again below, for the old texts (a JSON error, or the breach as a dict shows it)
    parsed: Any = None
    if raw:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None, None, True
    answer, reason = _validated_parsed(parsed)
    return answer, reason, False
