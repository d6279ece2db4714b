"""Partner persistence."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, String, Table, func, insert, literal_column, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.cancellation.policy import from_json
from transfers.db.direct import DirectStatement
from transfers.db.tables import partners, rate_cards, vehicle_types
from transfers.partners.models import PartnerRecord

# Any number will do, as long as nothing else takes this lock: the sandbox partner's registration.
_SANDBOX_REGISTRATION_LOCK = text("SELECT pg_advisory_xact_lock(727001)")


async def lock_sandbox_registration(conn: AsyncConnection) -> None:
    """PostgreSQL: hold the sandbox partner's registration lock to the end of the transaction, so API
    processes starting at once register it one after the other (SQLite's writes are serial anyway)."""
    await conn.execute(_SANDBOX_REGISTRATION_LOCK)


def _record(row: Any) -> PartnerRecord:
    return PartnerRecord(
        partner_id=int(row.id),
        name=row.name,
        base_url=row.base_url,
        airports=tuple(a for a in row.airports.split(",") if a),
        markup_percent=Decimal(row.markup_percent),
        status=row.status,
        is_sandbox=bool(row.is_sandbox),
        hosted=bool(row.hosted),
        cancellation_policy=None if row.cancellation_policy is None else from_json(row.cancellation_policy),
    )


async def insert_partner(
    conn: AsyncConnection,
    *,
    name: str,
    base_url: str,
    airports: tuple[str, ...],
    markup_percent: Decimal,
    token_enc: str,
    secret_enc: str,
    now: datetime,
    is_sandbox: bool = False,
    hosted: bool = False,
    cancellation_policy: list[dict[str, Any]] | None = None,
) -> int:
    return int(
        (
            await conn.execute(
                insert(partners)
                .values(
                    name=name,
                    base_url=base_url,
                    airports=",".join(airports),
                    markup_percent=markup_percent,
                    status="enabled",
                    outbound_token_enc=token_enc,
                    signing_secret_enc=secret_enc,
                    is_sandbox=is_sandbox,
                    created_at=now,
                    hosted=hosted,
                    cancellation_policy=cancellation_policy,
                )
                .returning(partners.c.id)
            )
        ).scalar_one()
    )


async def list_partners(conn: AsyncConnection) -> list[PartnerRecord]:
    return [_record(r) for r in await conn.execute(select(partners).order_by(partners.c.id))]


class Sealed(NamedTuple):
    """A partner with its secrets as stored (encrypted); ``partners.service.endpoint`` opens them."""

    record: PartnerRecord
    token_enc: str
    secret_enc: str
    previous_secret_enc: str | None = None
    previous_until: datetime | None = None


def _sealed(row: Any) -> Sealed:
    return Sealed(
        _record(row),
        row.outbound_token_enc,
        row.signing_secret_enc,
        row.previous_signing_secret_enc,
        row.previous_secret_until,
    )


async def enabled_with_secrets(conn: AsyncConnection) -> list[Sealed]:
    rows = await conn.execute(select(partners).where(partners.c.status == "enabled").order_by(partners.c.id))
    return [_sealed(r) for r in rows]


async def get_with_secrets(conn: AsyncConnection, partner_id: int) -> Sealed | None:
    row = (await conn.execute(select(partners).where(partners.c.id == partner_id))).first()
    return None if row is None else _sealed(row)


async def lock_partner(conn: AsyncConnection, partner_id: int) -> Sealed | None:
    """The partner's row, locked until the transaction ends (PostgreSQL; SQLite's write lock is held
    already): two rotations of one partner run one after the other."""
    row = (await conn.execute(select(partners).where(partners.c.id == partner_id).with_for_update())).first()
    return None if row is None else _sealed(row)


async def sandbox_partner_row(conn: AsyncConnection) -> Any:
    return (await conn.execute(select(partners).where(partners.c.is_sandbox.is_(True)))).first()


async def set_status(conn: AsyncConnection, partner_id: int, status: str) -> bool:
    result = await conn.execute(update(partners).where(partners.c.id == partner_id).values(status=status))
    return result.rowcount == 1


async def update_partner(conn: AsyncConnection, partner_id: int, **values: Any) -> None:
    await conn.execute(update(partners).where(partners.c.id == partner_id).values(**values))


async def flight_policy(conn: AsyncConnection, partner_id: int) -> dict[str, int] | None:
    """``{"follow_flight_minutes", "free_wait_minutes"}`` of a partner (docs/rules/flights.md#partner-policy)."""
    row = (
        await conn.execute(
            select(partners.c.follow_flight_minutes, partners.c.free_wait_minutes).where(partners.c.id == partner_id)
        )
    ).first()
    if row is None:
        return None
    return {"follow_flight_minutes": int(row[0]), "free_wait_minutes": int(row[1])}


# The mark of everything the partner directory's snapshot is built from (partners/directory.py says
# why and how it is used). PostgreSQL: the
# SHA-256 of every row as PostgreSQL writes it out as text; the arrays keep rows and tables apart without a
# separator to escape.
PG_MARK = DirectStatement(
    select(
        literal_column(
            "encode(sha256(convert_to(ROW(ARRAY(SELECT p FROM partners AS p ORDER BY p.id), "
            "ARRAY(SELECT t FROM vehicle_types AS t ORDER BY t.id), "
            "ARRAY(SELECT c FROM rate_cards AS c ORDER BY c.partner_id))::text, 'UTF8')), 'hex')",
            String,
        ).label("mark")
    )
)


def _sqlite_rows(table: Table, order: ColumnElement[Any]) -> ColumnElement[str]:
    """Every row of ``table`` as text, one a line: each column (all of the table's, so a column added
    later counts too) as SQLite's ``quote()`` writes it (strings quoted, their quotes doubled: the
    commas between columns cannot be mistaken)."""
    first, *rest = (func.quote(column, type_=String) for column in table.c)
    row: ColumnElement[str] = first
    for quoted in rest:
        row = row + literal_column("','", String) + quoted
    rows = select(row.label("r")).order_by(order).subquery()
    every = select(func.group_concat(rows.c.r, literal_column("char(10)"), type_=String)).scalar_subquery()
    return func.coalesce(every, literal_column("''", String), type_=String)


# SQLite has no hash function: its mark is the rows' text itself (tens of kB for fifty partners).
SQLITE_MARK = DirectStatement(
    select(
        (
            _sqlite_rows(partners, partners.c.id)
            + literal_column("char(30)", String)
            + _sqlite_rows(vehicle_types, vehicle_types.c.id)
            + literal_column("char(30)", String)
            + _sqlite_rows(rate_cards, rate_cards.c.partner_id)
        ).label("mark")
    )
)
