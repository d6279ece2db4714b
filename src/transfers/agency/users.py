"""Agency users (docs/rules/agency-portal.md#users): the people of a client who sign in at
``/agency/``. ``admin`` does everything the portal offers, including ``Developers`` and ``Users``;
``agent`` books, follows and fixes bookings and reads the wallet.

Used by ``transfers clients users create`` and by the portal's ``Users`` page: the same rules (the
e-mail checked and lower-cased, one account per mailbox, the password hashed with argon2id by
``webauth.passwords``), each change one transaction with its ``admin_audit`` row. Disabling a user
ends its sessions at once (``webauth.sessions.end_user_sessions``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.agency import repository as repo
from transfers.clients.repository import client_exists, record_admin_action
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Invalid, NotFound
from transfers.webauth.passwords import generate_password, hash_password, password_problem
from transfers.webauth.sessions import end_user_sessions
from transfers.webauth.signin import MAX_EMAIL_CHARS, Credentials, normalise_email

REALM = "agency"  # web_sessions.realm of agency users (agency/auth.py builds the Realm around it)


class AgencyRole(StrEnum):
    ADMIN = "admin"
    AGENT = "agent"


class AgencyUserRefused(Invalid, ValueError):
    """The e-mail, role or password is not acceptable, or the e-mail is taken; the message says which."""


class NoSuchClient(NotFound):
    default_message = "There is no such client."


class NoSuchUser(NotFound):
    default_message = "There is no such user."


@dataclass(frozen=True, slots=True)
class CreatedAgencyUser:
    user_id: int
    client_id: int
    email: str
    role: AgencyRole
    password: str  # shown once

    def as_json(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "client_id": self.client_id,
            "email": self.email,
            "role": self.role.value,
            "password": self.password,
        }


def clean_email(email: str) -> str:
    value = normalise_email(email)
    if not value or len(email.strip()) > MAX_EMAIL_CHARS:
        raise AgencyUserRefused("Enter an e-mail address (at most 320 characters).")
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as exc:
        raise AgencyUserRefused(f"Not an e-mail address: {exc}") from None
    return value


def clean_role(role: object) -> AgencyRole:
    try:
        return AgencyRole(str(role))
    except ValueError:
        raise AgencyUserRefused("Choose the role: admin or agent.") from None


async def credentials(conn: AsyncConnection, email: str) -> Credentials | None:
    """The portal sign-in's lookup (``webauth.signin.UserLookup``): a disabled user may not sign in."""
    row = await repo.by_email(conn, email)
    if row is None:
        return None
    return Credentials(row.id, row.password_hash, row.status == "active")


async def create_user(
    db: Database,
    clock: Clock,
    *,
    client_id: int,
    email: str,
    role: object,
    password: str | None,
    actor: str,
) -> CreatedAgencyUser:
    address = clean_email(email)
    chosen_role = clean_role(role)
    chosen = password if password is not None else generate_password()
    problem = password_problem(chosen)
    if problem is not None:
        raise AgencyUserRefused(problem)
    hashed = hash_password(chosen)
    now = clock.now()
    try:
        async with db.write() as conn:
            if not await client_exists(conn, client_id):
                raise NoSuchClient(f"There is no client {client_id}.")
            if await repo.by_email(conn, address) is not None:
                raise AgencyUserRefused(f"{address} already has an account.")
            user_id = await repo.insert_user(
                conn, client_id=client_id, email=address, role=chosen_role.value, password_hash=hashed, now=now
            )
            await record_admin_action(
                conn,
                actor=actor,
                action="agency_user.create",
                subject=f"client:{client_id}",
                details={"user_id": user_id, "email": address, "role": chosen_role.value},
                now=now,
            )
    except IntegrityError:  # the same e-mail created meanwhile by another request
        raise AgencyUserRefused(f"{address} already has an account.") from None
    return CreatedAgencyUser(user_id, client_id, address, chosen_role, chosen)


async def set_user_status(db: Database, clock: Clock, *, client_id: int, user_id: int, status: str, actor: str) -> None:
    """Disable (its sessions end at once) or enable again a user of ``client_id``; another agency's
    user is ``NoSuchUser`` (a 404), the same as one that does not exist."""
    if status not in ("active", "disabled"):
        raise AgencyUserRefused("A user is active or disabled.")
    now = clock.now()
    async with db.write() as conn:
        if not await repo.set_status(conn, client_id=client_id, user_id=user_id, status=status, now=now):
            raise NoSuchUser()
        if status == "disabled":
            await end_user_sessions(conn, REALM, user_id)
        await record_admin_action(
            conn,
            actor=actor,
            action=f"agency_user.{'disable' if status == 'disabled' else 'enable'}",
            subject=f"client:{client_id}",
            details={"user_id": user_id},
            now=now,
        )


async def list_users(db: Database, client_id: int) -> list[repo.AgencyUserRow]:
    async with db.read() as conn:
        return await repo.users_of_client(conn, client_id)
