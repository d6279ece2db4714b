"""A client's message settings: read and change them (docs/rules/messages.md#settings).

Used by the CLI (``transfers clients messages``), the console's client page and the agency portal's
``Messages`` page. A change is one transaction: the settings row, ``clients.support_phone`` and an
``admin_audit`` row naming who changed what.
"""

from __future__ import annotations

from transfers.clients import repository as clients_repo
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import NotFound
from transfers.messages import repository as repo
from transfers.messages.models import MessageSettings
from transfers.messages.settings_rules import SettingsChange, changed


class MessageClientNotFound(NotFound):
    """No client by that id."""


async def get_settings(db: Database, client_id: int) -> MessageSettings:
    async with db.read() as conn:
        found = await repo.settings_of(conn, client_id)
    if found is None:
        raise MessageClientNotFound(f"no client {client_id}")
    return found


async def update_settings(
    db: Database, clock: Clock, client_id: int, change: SettingsChange, *, actor: str
) -> MessageSettings:
    """Apply ``change`` (``settings_rules.changed``: ``SettingsInvalid`` changes nothing) and answer the
    settings as stored."""
    now = clock.now()
    async with db.write() as conn:
        current = await repo.settings_of(conn, client_id)
        if current is None:
            raise MessageClientNotFound(f"no client {client_id}")
        after = changed(current, change, now)
        await repo.save_settings(conn, after, now)
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="client.message_settings",
            subject=f"client:{client_id}",
            details={k: v for k, v in after.resource().items() if k not in ("client_id", "updated_at")},
            now=now,
        )
    stored = await get_settings(db, client_id)
    return stored
