"""Ask every partner serving the airport at once; keep whoever answers well within the deadline.

Latency is the slowest good answer or the deadline, never the sum. A partner that is slow, down,
answers an error, or answers something that fails the wire contract (including a vehicle type not
in the reference data) is left out of this search and logged with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import structlog
from pydantic import ValidationError

from transfers.observability.metrics import observe_partner_call
from transfers.partners.client import PartnerClient, PartnerEndpoint, SharedDeadline
from transfers.partners.health import HealthBuffer
from transfers.partners.models import PartnerRecord
from transfers.partners.wire import WireSearchAnswer, WireVehicle

log = structlog.get_logger("transfers.search")


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
    # One deadline for the whole fan-out (one timer, not one per call); each call still times out
    # as under its own (client.SharedDeadline), measured and judged by itself.
    deadline = SharedDeadline(timeout)
    try:
        results = await asyncio.gather(
            *(
                _ask(
                    client,
                    record,
                    endpoint,
                    payload,
                    body,
                    timeout,
                    deadline,
                    vehicle_types,
                    max_vehicles,
                    health if now is not None else None,
                    now,
                )
                for record, endpoint in partners
            )
        )
    finally:
        deadline.close()
    return [answer for answer in results if answer is not None]


async def _ask(
    client: PartnerClient,
    record: PartnerRecord,
    endpoint: PartnerEndpoint,
    payload: dict[str, Any],
    body: bytes,
    timeout: float,
    deadline: SharedDeadline,
    vehicle_types: Set[str],
    max_vehicles: int,
    health: HealthBuffer | None,
    now: datetime | None,
) -> PartnerAnswer | None:
    result = await client.call(
        endpoint, "POST", "/booking/search", payload, timeout=timeout, observe=False, body=body, deadline=deadline
    )
    if not result.ok:
        observe_partner_call(endpoint.name, "/booking/search", result.outcome, result.duration_ms)  # metrics
        if health is not None and now is not None:
            health.record(record.partner_id, result.outcome, result.duration_ms, now)
        return None  # the client already logged the transport outcome
    reason = None
    answer = None
    try:
        answer = WireSearchAnswer.model_validate(result.body)
    except ValidationError as exc:
        reason = f"answer breaks the contract: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"
    if answer is not None:
        unknown = {v.type for v in answer.vehicles} - vehicle_types
        if len(answer.vehicles) > max_vehicles:
            reason = f"{len(answer.vehicles)} vehicles, more than {max_vehicles}"
        elif unknown:
            reason = f"vehicle types not in the reference data: {sorted(unknown)[:5]}"
    # metrics: one count per call, with the final judgement (a contract breach is "invalid")
    judged = "ok" if reason is None and answer is not None else "invalid"
    observe_partner_call(endpoint.name, "/booking/search", judged, result.duration_ms)
    if health is not None and now is not None:  # partner health: counted where the call is judged
        health.record(record.partner_id, judged, result.duration_ms, now)
    if reason is not None or answer is None:
        log.warning("partner_answer_rejected", partner=record.name, partner_id=record.partner_id, reason=reason)
        return None
    return PartnerAnswer(record, answer.vehicles, answer.distance_km)
