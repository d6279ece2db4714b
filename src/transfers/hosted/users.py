"""Partner users: the accounts a partner's staff sign in to the portal with (DECISIONS 16).

``transfers partners users create --partner ID --email EMAIL`` makes one, with a generated password
shown once (or one read from stdin). Passwords are stored only as a memory-hard hash (argon2id,
through ``hosted/passwords.py``). Any partner, hosted or not, may have users: server partners use
the portal read-only (their bookings, their health, their secret rotation).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.exc import IntegrityError

from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.hosted import repository as repo
from transfers.hosted.passwords import hash_password

MIN_PASSWORD = 12
MAX_PASSWORD = 200


class UserRefused(ValueError):
    """The e-mail or password is not acceptable, or the e-mail is taken; the message says which."""


class UnknownPartner(LookupError):
    """No partner has that id."""


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
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise UserRefused(f"the password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return password


async def create_partner_user(db: Database, clock: Clock, *, partner_id: int, email: str,
                              password: str | None, actor: str) -> NewPartnerUser:
    address = normalized_email(email)
    chosen = check_password(password) if password is not None else secrets.token_urlsafe(18)
    now = clock.now()
    try:
        async with db.write() as conn:
            if await repo.hosted_partner(conn, partner_id) is None:
                raise UnknownPartner(f"partner {partner_id}")
            user_id = await repo.insert_partner_user(conn, partner_id=partner_id, email=address,
                                                     password_hash=hash_password(chosen), now=now)
            await clients_repo.record_admin_action(
                conn, actor=actor, action="partner_user.create", subject=f"partner:{partner_id}",
                details={"user_id": user_id, "email": address}, now=now)
    except IntegrityError:
        raise UserRefused(f"--email: {address} already has an account") from None
    return NewPartnerUser(user_id, partner_id, address, chosen)
