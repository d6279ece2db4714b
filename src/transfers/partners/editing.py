"""Operator use cases on a registered partner beyond create/enable/disable (the console's
``Partners`` pages): change its service area, markup and base URL, and run the conformance suite
against its own server with its stored credentials. Each is audited with the operator.

Searches see an edit within ``TRANSFERS_PARTNER_CACHE_SECONDS`` (partners/directory.py); bookings
and deliveries read the partner's row and use the new base URL at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Refused
from transfers.partners import conformance
from transfers.partners import repository as repo
from transfers.partners.client import PartnerClient
from transfers.partners.models import EVERY_AIRPORT, check_base_url
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import PartnerNotFound, endpoint
from transfers.reference.airports import find_airport

CHECK_AIRPORT_FOR_EVERYWHERE = "LHR"
_DETAIL_CHARS = 500  # per check, in the audit row  # a partner serving every airport is checked at Heathrow


class NotCalled(Refused):
    """A hosted partner (docs/rules/hosted-partners.md) runs no server: there is nothing to call or check."""


@dataclass(frozen=True)
class PartnerSettings:
    """What an operator may change on a partner (all of it at once: the edit form sends every field).
    ``base_url`` is ignored for a hosted partner (it has no server; it stays empty)."""

    base_url: str
    airports: tuple[str, ...]
    markup_percent: Decimal


async def update_settings(
    db: Database, clock: Clock, partner_id: int, wanted: PartnerSettings, *, allow_private: bool, actor: str
) -> dict[str, Any]:
    """Write the partner's base URL, service area and markup (checked by ``partners/fields.py`` and
    ``check_base_url`` first; ``InvalidPartnerUrl`` here too). The audit row (``partner.update``)
    lists each changed field as ``[before, after]``; answers that dictionary (empty: nothing
    changed, and nothing is written or audited)."""
    async with db.write() as conn:
        current = await repo.lock_partner(conn, partner_id)
        if current is None:
            raise PartnerNotFound(f"no partner {partner_id}")
        before = current.record
        # A hosted partner has no server; the built-in sandbox partner's URL is the one this service mounts
        # it at (set at every start, trusted by that identity): neither URL is the operator's to change.
        fixed = before.hosted or before.is_sandbox
        url = before.base_url if fixed else check_base_url(wanted.base_url, allow_private=allow_private)
        changes: dict[str, Any] = {}
        if before.base_url != url:
            changes["base_url"] = [before.base_url, url]
        if before.airports != wanted.airports:
            changes["airports"] = [list(before.airports), list(wanted.airports)]
        if before.markup_percent != wanted.markup_percent:
            changes["markup_percent"] = [str(before.markup_percent), str(wanted.markup_percent)]
        if not changes:
            return {}
        await repo.update_partner(
            conn, partner_id, base_url=url, airports=",".join(wanted.airports), markup_percent=wanted.markup_percent
        )
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.update",
            subject=f"partner:{partner_id}",
            details=changes,
            now=clock.now(),
        )
    return changes


async def check_partner(
    db: Database,
    clock: Clock,
    box: SecretBox,
    client: PartnerClient,
    partner_id: int,
    *,
    actor: str,
    deadlines: conformance.Deadlines | None = None,
) -> conformance.Report:
    """``transfers partners check`` against the partner's registered base URL, signed with its stored
    token and current secret, through the service's own partner client (so the deployment's SSRF
    guard applies), at its first airport. The run is audited (``partner.check``) with its verdict
    and its table, which is where the console's partner page shows the last check from (any
    process, after a reload). No database transaction is open while the partner is called."""
    async with db.read() as conn:
        sealed = await repo.get_with_secrets(conn, partner_id)
    if sealed is None:
        raise PartnerNotFound(f"no partner {partner_id}")
    if sealed.record.hosted:
        raise NotCalled(f"partner {partner_id} is hosted: it runs no server, its prices come from its rate card")
    point = endpoint(sealed, box)
    codes = [c for c in sealed.record.airports if c != EVERY_AIRPORT]
    airport = find_airport(codes[0] if codes else CHECK_AIRPORT_FOR_EVERYWHERE)
    if airport is None:  # registered codes are checked against the same dataset
        raise LookupError(f"partner {partner_id}'s airport {codes[0]!r} is not in the airport dataset")
    report = await conformance.run_conformance(
        point.base_url,
        token=point.outbound_token,
        secret=point.signing_secret,
        airport=airport,
        deadlines=deadlines,
        client=client,
    )
    summary = report.as_dict()["summary"]
    async with db.write() as conn:
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.check",
            subject=f"partner:{partner_id}",
            details={
                "passed": report.passed,
                "airport": report.airport,
                "summary": summary,
                "failed": [c.name for c in report.checks if c.result == "FAIL"],
                "base_url": report.base_url,
                "reservation_no": report.reservation_no,
                "checks": [
                    {
                        "name": c.name,
                        "result": c.result,
                        "duration_ms": c.duration_ms,
                        "deadline_ms": c.deadline_ms,
                        "detail": (c.detail or "")[:_DETAIL_CHARS] or None,
                    }
                    for c in report.checks
                ],
                "warnings": [w[:_DETAIL_CHARS] for w in report.warnings],
            },
            now=clock.now(),
        )
    return report
