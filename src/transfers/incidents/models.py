"""An incident as the code holds it (one ``incidents`` row with its booking's reservation number) and
the one JSON shape every surface shows (docs/rules/incidents.md#incident)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from transfers import money
from transfers.rows import row_type


@row_type
class Incident:
    """One ``incidents`` row and its booking's reservation number."""

    id: int
    public_id: str
    booking_id: int
    reservation_no: str
    currency: str  # the booking's: the refund is in it
    type: str
    status: str
    reported_by: str
    description: str
    created_at: datetime
    responsible: str | None
    refund: Decimal | None
    note: str | None
    resolved_at: datetime | None
    resolved_by: str | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> Incident:
        return cls(*[row[name] for name in INCIDENT_FIELDS])

    def resource(self) -> dict[str, Any]:
        """The incident of the API, the webhooks, the reverse API and the CLI's JSON."""
        resolution = None
        if self.status == "RESOLVED":
            resolution = {
                "responsible": self.responsible,
                "refund": money.text(self.refund or Decimal(0), self.currency),
                "note": self.note,
                "resolved_at": _iso(self.resolved_at),
                "by": self.resolved_by,
            }
        return {
            "id": self.public_id,
            "reservation_no": self.reservation_no,
            "type": self.type,
            "status": self.status,
            "reported_by": self.reported_by,
            "description": self.description,
            "created_at": _iso(self.created_at),
            "resolution": resolution,
        }


INCIDENT_FIELDS = tuple(f.name for f in fields(Incident))


@row_type
class QueuedIncident:
    """An open incident as the console's queue lists it: the incident and what the list shows of its booking."""

    incident: Incident
    booking_status: str
    pickup_at: datetime
    airport_iata: str


def new_public_id() -> str:
    """``inc_`` and 128 random bits: unguessable, so an id names nothing a caller could not see."""
    return f"inc_{os.urandom(16).hex()}"


def _iso(value: datetime | None) -> str | None:
    """UTC, ISO 8601, as the BookingResource's ``created_at``."""
    return None if value is None else value.astimezone(UTC).isoformat()
