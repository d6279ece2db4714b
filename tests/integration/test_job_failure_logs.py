"""A failing scheduled job or delivery cycle is logged as ``job_failed`` with the job's name
(item 6), so an alert can tell which job broke. The failure is real: a database
without the schema (never migrated), where the first statement of each job fails."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.conftest import make_settings
from transfers.deliveries import Dispatcher
from transfers.jobs import scheduled
from transfers.services import Services
from transfers.worker import DELIVERY_JOB, Worker


@pytest.fixture
async def unmigrated(tmp_path: Path) -> AsyncIterator[Services]:
    svc = Services.build(make_settings(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}", tmp_path))
    yield svc
    await svc.partner_client.aclose()
    await svc.db.dispose()


def failures(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in logs if entry["log_level"] == "error"]


async def test_a_failing_scheduled_job_is_logged_under_its_name(unmigrated: Services) -> None:
    with capture_logs() as logs, pytest.raises(Exception, match="no such table"):
        await scheduled.run_all(unmigrated)
    (entry,) = failures(logs)
    assert entry["event"] == "job_failed" and entry["job"] == "expire_deliveries"  # the first job
    assert entry["exc_info"] is True  # the traceback goes with it


async def test_a_failing_delivery_cycle_is_logged_under_its_name(unmigrated: Services) -> None:
    worker = Worker(unmigrated, Dispatcher(unmigrated))
    with capture_logs() as logs:
        assert await worker.loop._cycle() == 0  # the loop keeps going
    (entry,) = failures(logs)
    assert entry["event"] == "job_failed" and entry["job"] == DELIVERY_JOB == "outbox_delivery"
