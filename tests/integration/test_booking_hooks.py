"""The feature packages register with the bookings at start-up (``transfers/features.py``,
``bookings/hooks.py``; docs/architecture/how-to-add.md, "A feature package"): every process that runs a
booking's use cases (the API's ``create_app``, the CLI's every command) registers them, once. That the
registered handlers act, on both databases, is shown by the features' own tests: amending a flight
number re-enrols the flight watch (tests/integration/test_flight_watch.py,
``test_amending_the_flight_number_restarts_the_watch``), a new booking's flight is checked at creation
(tests/integration/test_flight_check_at_creation.py)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.integration.test_flight_watch import BOOKING, book, get
from tests.servers import LiveServer
from transfers import features
from transfers.bookings.hooks import HOOKS, Hooks
from transfers.bookings.models import Booking
from transfers.config import Settings
from transfers.db.tables import flight_watches
from transfers.flights import enrolment
from transfers.incidents import repository as incident_repo
from transfers.services import Services


def test_register_fills_every_moment_once() -> None:
    hooks = Hooks()
    features.register(hooks)
    features.register(hooks)  # start-up may run twice in a process (the tests' several apps)
    assert hooks.new_booking == [enrolment.on_new_booking]
    assert hooks.amendment_applied == [enrolment.on_amendment_applied]
    assert hooks.partner_refunds == [incident_repo.partner_refunds]


@pytest.fixture
def empty_hooks(monkeypatch: pytest.MonkeyPatch) -> Hooks:
    """The process's registry as a process starts: nothing registered."""
    monkeypatch.setattr(HOOKS, "new_booking", [])
    monkeypatch.setattr(HOOKS, "amendment_applied", [])
    monkeypatch.setattr(HOOKS, "partner_refunds", [])
    return HOOKS


def test_create_app_registers_the_features(empty_hooks: Hooks, settings: Settings) -> None:
    from transfers.app import create_app

    create_app(settings, configure_logs=False)
    assert empty_hooks.new_booking == [enrolment.on_new_booking]
    assert empty_hooks.amendment_applied == [enrolment.on_amendment_applied]


def test_every_cli_command_registers_the_features(empty_hooks: Hooks) -> None:
    from transfers.cli.main import cli

    # the group's callback runs before the command parses its arguments: a usage error is enough
    result = CliRunner().invoke(cli, ["flights", "check"])
    assert result.exit_code == 2, result.output
    assert empty_hooks.new_booking == [enrolment.on_new_booking]
    assert empty_hooks.amendment_applied == [enrolment.on_amendment_applied]


class _Refused(Exception):
    """What the failing handler below raises after the flight watch's handler wrote."""


async def test_a_handler_writes_in_the_changes_transaction(
    http: httpx.AsyncClient,
    service: LiveServer,
    monkeypatch: pytest.MonkeyPatch,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """bookings/hooks.py: a handler runs in the transaction of the change it hears of. The flight watch's
    handler takes the amended flight's watch (a new ``flight_watches`` row); a handler registered after it
    fails: the amendment is not applied and the new watch's row is gone with it."""
    svc: Services = service.app.state.services
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "ZZ1061", days=11)
    number = booking["reservation_no"]

    heard: list[dict[str, Any]] = []

    async def refuse(conn: AsyncConnection, before: Booking, fields: dict[str, Any], now: datetime) -> dict[str, Any]:
        heard.append(fields)  # what the amendment and the handlers before this one made of it
        raise _Refused

    monkeypatch.setattr(HOOKS, "amendment_applied", [enrolment.on_amendment_applied, refuse])
    amended = await http.patch(
        BOOKING,
        params={"reservation_no": number},
        json={"travel_details": {"flight_number": "ZZ1-077"}},
        headers=bearer(key),
    )
    assert amended.status_code == 202, amended.text
    assert svc.dispatcher is not None
    with contextlib.suppress(_Refused):
        await svc.dispatcher.run_once(limit=200)
    # the partner confirmed, the flight watch's handler took the new flight's watch, then this one failed
    assert len(heard) == 1 and heard[0]["flight_number"] == "ZZ1077" and heard[0]["flight_watch_id"] is not None
    shown = await get(http, key, number)
    assert shown["amendment"]["status"] == "PENDING" and shown["flight_number"] == "ZZ1061"
    async with svc.db.read() as conn:
        rows = (
            await conn.execute(
                select(func.count()).select_from(flight_watches).where(flight_watches.c.number == "ZZ1077")
            )
        ).scalar_one()
    assert rows == 0
