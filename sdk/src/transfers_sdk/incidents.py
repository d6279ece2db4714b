"""Incidents (docs/rules/incidents.md): what went wrong on a ride and who pays, typed, and the two calls.

A report is not idempotent by key: a retry after a lost answer is answered 409 ``INCIDENT_EXISTS``
(raised as ``InvalidRequest``); read the booking's incidents then (``list_incidents``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from transfers_sdk._calls import API, Call
from transfers_sdk.models import _instant as _when
from transfers_sdk.models import _money

INCIDENTS = f"{API}/booking/incidents"
# What a client may report; CUSTOMER_NO_SHOW comes from the partner.
REPORTABLE_TYPES = ("DRIVER_NO_SHOW", "DRIVER_LATE", "WRONG_VEHICLE", "OTHER")


@dataclass(frozen=True)
class IncidentResolution:
    responsible: str  # partner | client | none
    refund: Decimal  # refunded to the wallet for this incident (0.00: nothing)
    note: str | None
    resolved_at: datetime
    by: str  # the operator, or "automatic"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IncidentResolution:
        return cls(
            str(data["responsible"]), _money(data["refund"]), data["note"], _when(data["resolved_at"]), str(data["by"])
        )


@dataclass(frozen=True)
class Incident:
    id: str  # inc_...
    reservation_no: str
    type: str  # DRIVER_NO_SHOW | DRIVER_LATE | CUSTOMER_NO_SHOW | WRONG_VEHICLE | OTHER
    status: str  # OPEN | RESOLVED
    reported_by: str  # client | partner | operator
    description: str
    created_at: datetime
    resolution: IncidentResolution | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Incident:
        resolution = data["resolution"]
        return cls(
            str(data["id"]),
            str(data["reservation_no"]),
            str(data["type"]),
            str(data["status"]),
            str(data["reported_by"]),
            str(data["description"]),
            _when(data["created_at"]),
            None if resolution is None else IncidentResolution.from_json(resolution),
        )


def report_incident(reservation_no: str, incident_type: str, description: str) -> Call[Incident]:
    body = json.dumps({"type": incident_type, "description": description}).encode()
    return Call("POST", INCIDENTS, Incident.from_json, params=(("reservation_no", reservation_no),), body=body)


def list_incidents(reservation_no: str) -> Call[list[Incident]]:
    return Call(
        "GET",
        INCIDENTS,
        lambda data: [Incident.from_json(i) for i in data["data"]],
        params=(("reservation_no", reservation_no),),
    )
