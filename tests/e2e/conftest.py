"""The sandbox as a new user meets it: the service with its built-in reference partner mounted and
the worker running in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import make_settings
from tests.servers import LiveServer, free_port
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.partners import repository as partners_repo
from transfers.services import Services

APPROVE_AFTER = 0.5


@pytest.fixture
async def sandbox(database_url: str, workdir: Path, clock: ShiftedClock, db: Database) -> AsyncIterator[LiveServer]:
    port = free_port()
    settings = make_settings(
        database_url,
        workdir,
        sandbox_partner=True,
        embedded_worker=True,
        sandbox_approve_after_seconds=APPROVE_AFTER,
        outbox_poll_seconds=0.1,
        public_base_url=f"http://127.0.0.1:{port}",
    )
    server = await LiveServer(create_app(settings, clock=clock, configure_logs=False), port=port).start()
    yield server
    await server.stop(graceful=True)
    svc: Services = server.app.state.services
    # The sandbox partner serves every airport: take it out of later tests' searches.
    async with db.write() as conn:
        for partner in await partners_repo.list_partners(conn):
            if partner.is_sandbox:
                await partners_repo.set_status(conn, partner.partner_id, "disabled")
    assert svc.shutting_down is True
