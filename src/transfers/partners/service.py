"""Partner registry use cases: register, list, disable, and the endpoints to call for an airport."""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache

from sqlalchemy.exc import IntegrityError

from transfers.auth.keys import IssuedKey, hash_key, issue_key, parse_key
from transfers.cancellation.policy import Policy
from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Invalid, NotFound
from transfers.partners import repository as repo
from transfers.partners.client import PartnerEndpoint
from transfers.partners.models import EVERY_AIRPORT, PartnerRecord, check_base_url
from transfers.partners.secrets_box import SecretBox
from transfers.partners.signing import SECRET_PREFIX, new_signing_secret

SANDBOX_PARTNER_NAME = "Sandbox Transfers Ltd"


@dataclass(frozen=True)
class RegisteredPartner:
    partner_id: int
    api_key: str
    outbound_token: str
    signing_secret: str


async def register_partner(
    db: Database,
    clock: Clock,
    box: SecretBox,
    *,
    name: str,
    base_url: str,
    airports: tuple[str, ...],
    markup_percent: Decimal,
    allow_private: bool,
    actor: str,
    cancellation_policy: Policy | None = None,
) -> RegisteredPartner:
    url = check_base_url(base_url, allow_private=allow_private)
    now = clock.now()
    issued = issue_key("pk")
    token = "ot_" + secrets.token_urlsafe(32)
    signing_secret = new_signing_secret()
    async with db.write() as conn:
        partner_id = await repo.insert_partner(
            conn,
            name=name,
            base_url=url,
            airports=airports,
            markup_percent=markup_percent,
            token_enc=box.seal(token),
            secret_enc=box.seal(signing_secret),
            now=now,
            cancellation_policy=None if cancellation_policy is None else cancellation_policy.public(),
        )
        await clients_repo.insert_api_key(conn, issued, now, partner_id=partner_id)
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.create",
            subject=f"partner:{partner_id}",
            details={
                "name": name,
                "base_url": url,
                "airports": list(airports),
                "markup_percent": str(markup_percent),
                "key_prefix": issued.prefix,
                "cancellation_policy": None if cancellation_policy is None else cancellation_policy.spec(),
            },
            now=now,
        )
    return RegisteredPartner(partner_id, issued.key, token, signing_secret)


@lru_cache(maxsize=1024)
def _opened(box: SecretBox, sealed: str) -> str:
    """Fernet decryption (HMAC check + AES) was paid twice per delivery. A sealed value is random per
    seal and always opens to the same text under one box, so memoising by (box, sealed text) is
    exact: a changed secret is a new sealed text, never a stale hit."""
    return box.open(sealed)


def endpoint(sealed: repo.Sealed, box: SecretBox) -> PartnerEndpoint:
    record = sealed.record
    return endpoint_of(
        record.partner_id,
        record.name,
        record.base_url,
        sealed.token_enc,
        sealed.secret_enc,
        box,
        previous_secret_enc=sealed.previous_secret_enc,
        previous_until=sealed.previous_until,
        hosted=record.hosted,
    )


def endpoint_of(
    partner_id: int,
    name: str,
    base_url: str,
    token_enc: str,
    secret_enc: str,
    box: SecretBox,
    *,
    previous_secret_enc: str | None = None,
    previous_until: datetime | None = None,
    hosted: bool = False,
) -> PartnerEndpoint:
    """The endpoint from a partner row's columns read elsewhere (the create path reads them with the
    offer). The previous signing secret is opened only while its overlap lasts."""
    previous = None
    if previous_secret_enc and previous_until is not None and previous_until > datetime.now(UTC):
        previous = _opened(box, previous_secret_enc)
    return PartnerEndpoint(
        partner_id,
        name,
        base_url,
        _opened(box, token_enc),
        _opened(box, secret_enc),
        previous_signing_secret=previous,
        previous_until=previous_until if previous else None,
        hosted=hosted,
    )


async def endpoint_for(db: Database, box: SecretBox, partner_id: int) -> PartnerEndpoint | None:
    async with db.read() as conn:
        found = await repo.get_with_secrets(conn, partner_id)
    return None if found is None else endpoint(found, box)


@dataclass(frozen=True)
class SandboxCredentials:
    """The built-in sandbox partner's credentials, derived from the secret key so that every API
    process of one deployment agrees on them without storing a clear-text key anywhere."""

    api_key: str
    outbound_token: str
    signing_secret: str


def sandbox_credentials(box: SecretBox) -> SandboxCredentials:
    prefix = "pk_" + box.derive("sandbox-partner-prefix").hex()[:12]
    secret = base64.urlsafe_b64encode(box.derive("sandbox-partner-key")).decode().rstrip("=")
    return SandboxCredentials(
        api_key=f"{prefix}_{secret}",
        outbound_token="ot_" + base64.urlsafe_b64encode(box.derive("sandbox-partner-token")).decode().rstrip("="),
        signing_secret=SECRET_PREFIX + base64.b64encode(box.derive("sandbox-partner-signing")).decode(),
    )


async def ensure_sandbox_partner(db: Database, clock: Clock, box: SecretBox, base_url: str) -> int:
    """Register (or refresh) the built-in sandbox partner, serving every airport. Idempotent and
    safe when several API processes start at once."""
    creds = sandbox_credentials(box)
    now = clock.now()
    async with db.write() as conn:
        if not db.is_sqlite:
            await repo.lock_sandbox_registration(conn)
        row = await repo.sandbox_partner_row(conn)
        if row is None:
            partner_id = await repo.insert_partner(
                conn,
                name=SANDBOX_PARTNER_NAME,
                base_url=base_url,
                airports=(EVERY_AIRPORT,),
                markup_percent=Decimal("0"),
                token_enc=box.seal(creds.outbound_token),
                secret_enc=box.seal(creds.signing_secret),
                now=now,
                is_sandbox=True,
            )
        else:
            partner_id = int(row.id)
            # Enabled again on every start: the deployment asked for it (TRANSFERS_SANDBOX_PARTNER);
            # set TRANSFERS_SANDBOX_PARTNER=0 to keep it out.
            await repo.update_partner(
                conn,
                partner_id,
                base_url=base_url,
                outbound_token_enc=box.seal(creds.outbound_token),
                signing_secret_enc=box.seal(creds.signing_secret),
                status="enabled",
            )
        parsed = parse_key(creds.api_key)
        assert parsed is not None, "derived sandbox keys are well-formed"
        prefix = parsed[1]
        if not await clients_repo.key_exists(conn, prefix):
            try:
                async with conn.begin_nested():
                    await clients_repo.insert_api_key(
                        conn,
                        IssuedKey(creds.api_key, prefix, hash_key(creds.api_key)),
                        now,
                        partner_id=partner_id,
                    )
            except IntegrityError:
                pass
    return partner_id


class PartnerNotFound(NotFound):
    """No partner has that id."""


async def list_partners(db: Database) -> list[PartnerRecord]:
    async with db.read() as conn:
        return await repo.list_partners(conn)


async def set_partner_status(db: Database, clock: Clock, partner_id: int, status: str, *, actor: str) -> None:
    """Enable or disable a partner. Disabling is the operator's off switch for a misbehaving
    partner: searches only ask enabled partners. Recorded in the admin audit like every operator action."""
    actions = {"enabled": "partner.enable", "disabled": "partner.disable"}
    if status not in actions:
        raise ValueError(f"unknown partner status {status!r}")
    async with db.write() as conn:
        if not await repo.set_status(conn, partner_id, status):
            raise PartnerNotFound(f"no partner {partner_id}")
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action=actions[status],
            subject=f"partner:{partner_id}",
            details={},
            now=clock.now(),
        )


async def set_cancellation_policy(
    db: Database, clock: Clock, partner_id: int, policy: Policy | None, *, actor: str
) -> None:
    """Set (or, with None, remove: free until pickup) a partner's default cancellation policy
    (docs/rules/cancellation.md). Only offers quoted afterwards carry it: a booking keeps the policy it was sold
    with. Recorded in the admin audit with the old and the new policy."""
    async with db.write() as conn:
        found = await repo.get_with_secrets(conn, partner_id)
        if found is None:
            raise PartnerNotFound(f"no partner {partner_id}")
        before = found[0].cancellation_policy
        await repo.update_partner(conn, partner_id, cancellation_policy=None if policy is None else policy.public())
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.cancellation_policy",
            subject=f"partner:{partner_id}",
            details={
                "before": None if before is None else before.spec(),
                "after": None if policy is None else policy.spec(),
            },
            now=clock.now(),
        )


# docs/rules/flights.md#partner-policy: how far a pickup follows the flight, and the free wait at airports
FOLLOW_FLIGHT_RANGE = (0, 1440)
FREE_WAIT_RANGE = (0, 240)


def flight_policy_problem(follow_flight_minutes: object, free_wait_minutes: object) -> str | None:
    """Why these limits cannot be set (a sentence naming the field), or None. Booleans are not numbers."""
    for name, value, (low, high) in (
        ("follow_flight_minutes", follow_flight_minutes, FOLLOW_FLIGHT_RANGE),
        ("free_wait_minutes", free_wait_minutes, FREE_WAIT_RANGE),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"{name} must be a whole number of minutes from {low} to {high}"
    return None


async def set_flight_policy(
    db: Database,
    clock: Clock,
    partner_id: int,
    *,
    follow_flight_minutes: int | None,
    free_wait_minutes: int | None,
    actor: str,
) -> dict[str, int]:
    """Set a partner's flight limits (either or both; docs/rules/flights.md#partner-policy). The follow limit
    applies to the next check of every watched booking; the free wait to bookings made from then on (a
    booking keeps the free wait it was sold with). Recorded in the admin audit. Answers both limits."""
    problem = flight_policy_problem(follow_flight_minutes, free_wait_minutes)
    if problem is not None:
        raise Invalid(problem)
    async with db.write() as conn:
        before = await repo.flight_policy(conn, partner_id)
        if before is None:
            raise PartnerNotFound(f"no partner {partner_id}")
        changes = {
            k: v
            for k, v in (("follow_flight_minutes", follow_flight_minutes), ("free_wait_minutes", free_wait_minutes))
            if v is not None
        }
        if changes:
            await repo.update_partner(conn, partner_id, **changes)
            await clients_repo.record_admin_action(
                conn,
                actor=actor,
                action="partner.flight_policy",
                subject=f"partner:{partner_id}",
                details={"before": before, "after": {**before, **changes}},
                now=clock.now(),
            )
        return {**before, **changes}
