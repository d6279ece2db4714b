"""The texts the sandbox SMS provider kept (docs/rules/messages.md#sending), newest first, for the
console's ``Messages`` page: in sandbox nothing is texted, the rendered text stays on the message row
(``provider_id`` ``sandbox-...``) and an operator reads it there, as the traveller would have."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, clients, traveller_messages
from transfers.messages.sms.provider import SANDBOX_ID_PREFIX

M = traveller_messages


@dataclass(frozen=True, slots=True)
class KeptText:
    id: int
    reservation_no: str
    client_id: int
    client_name: str
    template: str
    language: str
    to_address: str | None
    status: str
    sent_at: datetime | None
    body: str | None  # None once emptied, 30 days after the send


async def kept_texts(conn: AsyncConnection, *, limit: int, below_id: int | None = None) -> list[KeptText]:
    """Up to ``limit`` kept texts, newest first (by id), below ``below_id`` when paging."""
    statement = (
        select(
            M.c.id,
            bookings.c.reservation_no,
            M.c.client_id,
            clients.c.name.label("client_name"),
            M.c.template,
            M.c.language,
            M.c.to_address,
            M.c.status,
            M.c.sent_at,
            M.c.body,
        )
        .select_from(M.join(bookings, bookings.c.id == M.c.booking_id).join(clients, clients.c.id == M.c.client_id))
        .where(M.c.channel == "sms", M.c.provider_id.like(SANDBOX_ID_PREFIX + "%"))
        .order_by(M.c.id.desc())
        .limit(limit)
    )
    if below_id is not None:
        statement = statement.where(M.c.id < below_id)
    rows = (await conn.execute(statement)).mappings().all()
    return [
        KeptText(
            id=int(r["id"]),
            reservation_no=r["reservation_no"],
            client_id=int(r["client_id"]),
            client_name=r["client_name"],
            template=r["template"],
            language=r["language"],
            to_address=r["to_address"],
            status=r["status"],
            sent_at=r["sent_at"],
            body=r["body"],
        )
        for r in rows
    ]
