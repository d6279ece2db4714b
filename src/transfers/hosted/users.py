"""Partner users: the accounts a partner's staff sign in to the portal with (docs/rules/hosted-partners.md).

``transfers partners users create --partner ID --email EMAIL`` makes one, with a generated password
shown once (or one read from stdin). Passwords are stored only as a memory-hard hash (argon2id,
the operator console's ``webauth.passwords``); the portal signs them in through ``webauth.signin``
with ``credentials`` below as its lookup. Any partner, hosted or not, may have users: server partners use
the portal read-only (their bookings, their health, their secret rotation).
"""

from __future__ import annotations

from dataclasses import dataclass

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Invalid
from transfers.hosted import repository as repo
from transfers.partners.service import PartnerNotFound
from transfers.webauth.passwords import generate_password, hash_password, password_problem
from transfers.webauth.sessions import end_user_sessions
from transfers.webauth.signin import Credentials

REALM = "partner"  # web_sessions.realm of partner users (portal/auth.py builds the Realm around it)


class UserRefused(Invalid, ValueError):
    """The e-mail or password is not acceptable, or the e-mail is taken; the message says which."""


@dataclass(frozen=True)
class NewPartnerUser:
    user_id: int
    partner_id: int
    email: str
    password: str


def normalized_email(text: str) -> str:
    """The address as stored and compared: validated, domain lower-cased (e-mail is case-insensitive
    in practice, so the whole address is lower-cased: one account per mailbox)."""
    try:
        return str(validate_email(text.strip(), check_deliverability=False).normalized).lower()
    except EmailNotValidError as exc:
        raise UserRefused(f"--email: {exc}") from None


def check_password(password: str) -> str:
    problem = password_problem(password)
    if problem is not None:
        raise UserRefused(problem)
    return password


async def credentials(conn: AsyncConnection, email: str) -> Credentials | None:
    """The portal sign-in's lookup (``webauth.signin.UserLookup``): a disabled user, or a user of a
    disabled partner, may not sign in."""
    row = await repo.partner_user_by_email(conn, email)
    if row is None:
        return None
    partner = await repo.hosted_partner(conn, row.partner_id)
    active = row.status == "active" and partner is not None and partner.status == "enabled"
    return Credentials(row.id, row.password_hash, active)


async def set_user_status(
    db: Database, clock: Clock, *, partner_id: int, user_id: int, status: str, actor: str
) -> bool:
    """Enable or disable a partner user; disabling ends its portal sessions at once."""
    async with db.write() as conn:
        if not await repo.set_partner_user_status(conn, partner_id, user_id, status):
            return False
        if status == "disabled":
            await end_user_sessions(conn, REALM, user_id)
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action=f"partner_user.{'disable' if status == 'disabled' else 'enable'}",
            subject=f"partner:{partner_id}",
            details={"user_id": user_id},
            now=clock.now(),
        )
    return True


async def create_partner_user(
    db: Database, clock: Clock, *, partner_id: int, email: str, password: str | None, actor: str
) -> NewPartnerUser:
    address = normalized_email(email)
    chosen = check_password(password) if password is not None else generate_password()
    now = clock.now()
    try:
        async with db.write() as conn:
            if await repo.hosted_partner(conn, partner_id) is None:
                raise PartnerNotFound(f"no partner {partner_id}")
            user_id = await repo.insert_partner_user(
                conn, partner_id=partner_id, email=address, password_hash=hash_password(chosen), now=now
            )
            await clients_repo.record_admin_action(
                conn,
                actor=actor,
                action="partner_user.create",
                subject=f"partner:{partner_id}",
                details={"user_id": user_id, "email": address},
                now=now,
            )
    except IntegrityError:
        raise UserRefused(f"--email: {address} already has an account") from None
    return NewPartnerUser(user_id, partner_id, address, chosen)
