"""Hosted partners' use cases: register one, set and read its rate card (docs/rules/hosted-partners.md).

A hosted partner is a partner row like any other (service area, markup, status, a reverse-API key)
with ``hosted`` set: searches price it from its rate card in-process, and its bookings wait in the
portal instead of being sent over HTTP. Its outbound token and signing secret columns hold random
values nobody is shown: they are never used (there is no server to call), and keeping the columns
filled keeps every partner row the same shape.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from transfers.auth.keys import issue_key
from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Refused
from transfers.hosted import repository as repo
from transfers.partners import repository as partners_repo
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import PartnerNotFound
from transfers.partners.signing import new_signing_secret
from transfers.ratecards import card as cards
from transfers.ratecards import repository as cards_repo
from transfers.reference.repository import vehicle_type_names


class NotHostedPartner(Refused):
    """The partner exists but has a server of its own: its prices do not come from a rate card."""


@dataclass(frozen=True)
class RegisteredHostedPartner:
    partner_id: int
    api_key: str


async def register_hosted_partner(
    db: Database,
    clock: Clock,
    box: SecretBox,
    *,
    name: str,
    airports: tuple[str, ...],
    markup_percent: Decimal,
    actor: str,
) -> RegisteredHostedPartner:
    now = clock.now()
    issued = issue_key("pk")
    async with db.write() as conn:
        partner_id = await partners_repo.insert_partner(
            conn,
            name=name,
            base_url="",
            airports=airports,
            markup_percent=markup_percent,
            token_enc=box.seal("ot_" + secrets.token_urlsafe(32)),
            secret_enc=box.seal(new_signing_secret()),
            now=now,
            hosted=True,
        )
        await clients_repo.insert_api_key(conn, issued, now, partner_id=partner_id)
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.create",
            subject=f"partner:{partner_id}",
            details={
                "name": name,
                "hosted": True,
                "airports": list(airports),
                "markup_percent": str(markup_percent),
                "key_prefix": issued.prefix,
            },
            now=now,
        )
    return RegisteredHostedPartner(partner_id, issued.key)


async def _hosted(conn: Any, partner_id: int) -> None:
    row = await repo.hosted_partner(conn, partner_id)
    if row is None:
        raise PartnerNotFound(f"no hosted partner {partner_id}")
    if not row.hosted:
        raise NotHostedPartner(f"partner {partner_id} is not hosted: its own server quotes its prices")


async def set_rate_card(db: Database, clock: Clock, partner_id: int, document: Any, *, actor: str) -> cards.RateCard:
    """Validate ``document`` (parsed JSON) and store it as the partner's card; InvalidRateCard lists
    every problem, and then nothing is written. Audited with ``actor``."""
    now = clock.now()
    async with db.write() as conn:
        await _hosted(conn, partner_id)
        parsed = cards.parse(document, vehicle_types=frozenset(await vehicle_type_names(conn)))
        await cards_repo.put_card(conn, partner_id, document, actor=actor, now=now)
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.rate_card.set",
            subject=f"partner:{partner_id}",
            details={"vehicles": [v.id for v in parsed.vehicles], "currency": parsed.currency},
            now=now,
        )
    return parsed


async def get_rate_card(db: Database, partner_id: int) -> dict[str, Any] | None:
    """The stored card as it was set (None: none yet)."""
    async with db.read() as conn:
        await _hosted(conn, partner_id)
        return await cards_repo.get_card(conn, partner_id)


async def vehicle_types(db: Database) -> frozenset[str]:
    async with db.read() as conn:
        return frozenset(await vehicle_type_names(conn))
