"""Rotating a partner's signing secret without a moment where its server refuses our calls.

A rotation draws a new ``whsec_`` secret and keeps the one it replaces as the *previous* secret for
an overlap (``TRANSFERS_PARTNER_SECRET_OVERLAP_HOURS``, 24 h by default, the same window docs/rules/webhooks.md
gives client webhook secrets). During the overlap every call to the partner carries two
signatures in ``webhook-signature`` (Standard Webhooks: space-separated, the new secret's first),
so a partner that still verifies with the old secret, or already with the new one, accepts it; the
partner switches its configuration whenever it likes within the window (PARTNER_API.md, "Rotating
the signing secret"). After the overlap only the new secret signs.

Rotating again during an overlap keeps only the secret being replaced as the previous one (the
older one stops signing at once): at most two signatures are ever sent. The built-in sandbox
partner's secret is derived from the deployment's secret key and restored at every start, so it is
not rotated here (refused), and a hosted partner (docs/rules/hosted-partners.md) is never called, so it has none to
rotate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Refused
from transfers.partners import repository as repo
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import PartnerNotFound
from transfers.partners.signing import new_signing_secret


class RotationRefused(Refused):
    """The partner's secret cannot be rotated (the built-in sandbox partner)."""


@dataclass(frozen=True)
class RotatedSecret:
    partner_id: int
    signing_secret: str
    """The new secret, in clear: shown to the operator once, stored only encrypted."""
    previous_valid_until: datetime
    """Until when calls are signed with the replaced secret as well."""


async def rotate_signing_secret(
    db: Database, clock: Clock, box: SecretBox, partner_id: int, *, overlap: timedelta, actor: str
) -> RotatedSecret:
    """New secret, previous one kept for ``overlap``, and the audit row, in one transaction (the row
    locked, so two rotations at once run one after the other and both are audited)."""
    if overlap < timedelta(0):
        raise ValueError("the overlap cannot be negative")
    now = clock.now()
    secret = new_signing_secret()
    until = now + overlap
    async with db.write() as conn:
        current = await repo.lock_partner(conn, partner_id)
        if current is None:
            raise PartnerNotFound(f"no partner {partner_id}")
        if current.record.hosted:
            raise RotationRefused(
                "a hosted partner runs no server and is never called: it has no signing secret to rotate"
            )
        if current.record.is_sandbox:
            raise RotationRefused(
                "the built-in sandbox partner's secret is derived from TRANSFERS_SECRET_KEY "
                "and restored at every start; it cannot be rotated"
            )
        await repo.update_partner(
            conn,
            partner_id,
            signing_secret_enc=box.seal(secret),
            previous_signing_secret_enc=current.secret_enc,
            previous_secret_until=until,
        )
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="partner.rotate_secret",
            subject=f"partner:{partner_id}",
            details={"previous_valid_until": until.isoformat(), "overlap_hours": overlap.total_seconds() / 3600},
            now=now,
        )
    return RotatedSecret(partner_id, secret, until)
