"""A conformance suite for a partner's server: ``transfers partners check URL``.

It calls the four partner endpoints (PARTNER_API.md 3.1-3.4) the way the service does, with the
service's own ``PartnerClient`` (same JSON bytes, headers and Standard Webhooks signature), and
judges every answer the way the service would: by the service's validators
(``transfers.partners.wire``), by the published OpenAPI document (``openapi/partner.yaml``, when
``jsonschema`` and ``PyYAML`` are installed) and by the time budgets. Then it checks that the
server refuses calls that are not the service's (bad signature, wrong bearer token, stale
timestamp) with 401.

The bookings it makes are test bookings (``TB-CHECK...``) and are cancelled again at the end.

The package is split by job: ``results`` (the report), ``contract`` (partner.yaml), ``judging``
(answers into words), ``session`` (call, judge, record), one module per group of checks
(``search``, ``booking``, ``updates``, ``auth`` with its hand-signed ``signed_request``) and
``runner`` (their order). Callers import from here only; ``run_conformance`` lives here, and
reads ``contract_schemas`` from this namespace, so that a caller (or a test) can substitute the
schemas for the whole package in one place.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from transfers.context import request_id_var
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.conformance.booking import RESERVATION_PREFIX, check_reservation_no
from transfers.partners.conformance.contract import ContractSchemas, contract_schemas
from transfers.partners.conformance.judging import transport_problem, wire_errors
from transfers.partners.conformance.results import Check, Deadlines, Report, Verdict
from transfers.partners.conformance.runner import ConformanceRun
from transfers.partners.conformance.search import (
    DAYS_AHEAD,
    DISTANCE_KM,
    PARTY_ADULTS,
    REFERENCE_VEHICLE_TYPES,
    destination_point,
)
from transfers.partners.conformance.signed_request import secret_problem
from transfers.reference.airports import Airport

__all__ = [
    "DAYS_AHEAD",
    "DISTANCE_KM",
    "PARTY_ADULTS",
    "REFERENCE_VEHICLE_TYPES",
    "RESERVATION_PREFIX",
    "Check",
    "ConformanceRun",
    "ContractSchemas",
    "Deadlines",
    "Report",
    "Verdict",
    "check_reservation_no",
    "contract_schemas",
    "destination_point",
    "run_conformance",
    "secret_problem",
    "transport_problem",
    "wire_errors",
]


async def run_conformance(
    base_url: str,
    *,
    token: str,
    secret: str,
    airport: Airport,
    deadlines: Deadlines | None = None,
    client: PartnerClient | None = None,
    now: datetime | None = None,
) -> Report:
    """Run every check against ``base_url``; the report says what passed. Never raises for a bad partner."""
    deadlines = deadlines or Deadlines()
    schemas = contract_schemas()
    endpoint = PartnerEndpoint(0, "conformance-check", base_url, token, secret)
    own_client = client is None
    http = client or PartnerClient()
    marker = request_id_var.set(f"partner-check-{uuid.uuid4().hex[:12]}")
    run = ConformanceRun(http, endpoint, airport, deadlines, schemas, now=now)
    try:
        checks = await run.run()
    finally:
        request_id_var.reset(marker)
        if own_client:
            await http.aclose()
    report = Report(base_url, airport.iata, checks, reservation_no=run.reservation_no)
    if schemas.unavailable:
        report.warnings.append(schemas.unavailable)
    return report
