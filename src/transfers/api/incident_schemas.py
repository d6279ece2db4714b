"""OpenAPI shapes of docs/rules/incidents.md: the report, the incident and its list (strict: the API tests
validate the real answers against them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from transfers.api.schemas import WITH_VALIDATION, Error422, ServiceErrorBody, service_errors
from transfers.errors import ErrorCode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportIncidentRequest(_Strict):
    type: Literal["DRIVER_NO_SHOW", "DRIVER_LATE", "WRONG_VEHICLE", "OTHER"] = Field(
        description="CUSTOMER_NO_SHOW is reported by the partner, never by a client"
    )
    description: str = Field(min_length=1, max_length=2000)


class IncidentResolution(_Strict):
    responsible: Literal["partner", "client", "none"]
    refund: str = Field(
        description='refunded to the wallet for this incident, with exactly the currency\'s decimals ("0.00": nothing)'
    )
    note: str | None
    resolved_at: datetime
    by: str = Field(description='the operator, or "automatic" for a decision the service takes itself')


class Incident(_Strict):
    id: str = Field(description="inc_...")
    reservation_no: str
    type: Literal["DRIVER_NO_SHOW", "DRIVER_LATE", "CUSTOMER_NO_SHOW", "WRONG_VEHICLE", "OTHER"]
    status: Literal["OPEN", "RESOLVED"]
    reported_by: Literal["client", "partner", "operator"]
    description: str
    created_at: datetime
    resolution: IncidentResolution | None


class IncidentList(_Strict):
    data: list[Incident]


def _error(description: str) -> dict[str, Any]:
    return {"model": ServiceErrorBody, "description": description}


REPORT_ERRORS: dict[int | str, dict[str, Any]] = {
    **WITH_VALIDATION,
    **service_errors(ErrorCode.INCIDENT_EXISTS),
    422: {"model": Error422, "description": "1200 / 1201 (the reservation), INVALID_INCIDENT or INCIDENT_NOT_ALLOWED"},
}
LIST_ERRORS: dict[int | str, dict[str, Any]] = WITH_VALIDATION
