"""Operator use cases, shared by the CLI (``transfers operators ...``) and the console: create (a
generated or given password, hashed with argon2id), list, disable (every session ends at once), and
what the console's sign-in needs. Each change is one transaction with its ``admin_audit`` row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clients.repository import record_admin_action
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.operators import repository as repo
from transfers.operators.models import Operator, OperatorProblem, OperatorStatus, Role
from transfers.webauth.passwords import generate_password, hash_password, password_problem
from transfers.webauth.sessions import end_user_sessions
from transfers.webauth.signin import MAX_EMAIL_CHARS, Credentials, normalise_email

REALM = "console"  # web_sessions.realm of operators (console/auth.py builds the Realm around it)


@dataclass(frozen=True, slots=True)
class CreatedOperator:
    operator_id: int
    email: str
    role: Role
    password: str  # shown once

    def as_json(self) -> dict[str, Any]:
        return {
            "operator_id": self.operator_id,
            "email": self.email,
            "role": self.role.value,
            "password": self.password,
        }


def clean_email(email: str) -> str:
    value = normalise_email(email)
    if not value or len(email.strip()) > MAX_EMAIL_CHARS:
        raise OperatorProblem("an e-mail address is required (at most 320 characters)")
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as exc:
        raise OperatorProblem(f"not an e-mail address: {exc}") from None
    return value


def operator_of(row: repo.OperatorRow) -> Operator:
    return Operator(row.id, row.email, Role(row.role), OperatorStatus(row.status))


async def create_operator(
    db: Database, clock: Clock, *, email: str, role: Role, password: str | None, actor: str
) -> CreatedOperator:
    address = clean_email(email)
    chosen = password if password is not None else generate_password()
    problem = password_problem(chosen)
    if problem is not None:
        raise OperatorProblem(problem)
    hashed = hash_password(chosen)
    now = clock.now()
    try:
        async with db.write() as conn:
            if await repo.by_email(conn, address) is not None:
                raise OperatorProblem(f"an operator with e-mail {address} exists already")
            operator_id = await repo.insert_operator(
                conn, email=address, role=role.value, password_hash=hashed, now=now
            )
            await record_admin_action(
                conn,
                actor=actor,
                action="operator.create",
                subject=f"operator:{operator_id}",
                details={"email": address, "role": role.value},
                now=now,
            )
    except IntegrityError:  # the same e-mail created concurrently
        raise OperatorProblem(f"an operator with e-mail {address} exists already") from None
    return CreatedOperator(operator_id, address, role, chosen)


async def list_operators(db: Database) -> list[repo.ListedOperator]:
    async with db.read() as conn:
        return await repo.list_operators(conn)


async def disable_operator(db: Database, clock: Clock, operator_id: int, *, actor: str) -> int:
    """Disable the operator and end every session it has (on every process: sessions live in the
    database). Returns how many sessions ended. Disabling twice is harmless."""
    now = clock.now()
    async with db.write() as conn:
        row = await repo.by_id(conn, operator_id)
        if row is None:
            raise OperatorProblem(f"no operator {operator_id}")
        if row.status != OperatorStatus.DISABLED.value:
            await repo.disable(conn, operator_id, now)
        ended = await end_user_sessions(conn, REALM, operator_id)
        await record_admin_action(
            conn,
            actor=actor,
            action="operator.disable",
            subject=f"operator:{operator_id}",
            details={"email": row.email, "sessions_ended": ended},
            now=now,
        )
    return ended


async def credentials(conn: AsyncConnection, email: str) -> Credentials | None:
    """The sign-in's lookup (``webauth.signin.UserLookup``)."""
    row = await repo.by_email(conn, email)
    if row is None:
        return None
    return Credentials(row.id, row.password_hash, row.status == OperatorStatus.ACTIVE.value)


async def active_operator(db: Database, operator_id: int) -> Operator | None:
    """The operator of a session, None when it is gone or disabled."""
    async with db.read() as conn:
        row = await repo.by_id(conn, operator_id)
    if row is None or row.status != OperatorStatus.ACTIVE.value:
        return None
    return operator_of(row)


async def record_session_event(db: Database, clock: Clock, operator: Operator, action: str) -> None:
    """An operator signed in or out (``operator.sign_in`` / ``operator.sign_out``) in the audit log."""
    async with db.write() as conn:
        await record_admin_action(
            conn,
            actor=operator.actor,
            action=action,
            subject=f"operator:{operator.operator_id}",
            details={},
            now=clock.now(),
        )
