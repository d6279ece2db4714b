"""The feature packages register with the bookings at start-up (``transfers/features.py``,
``bookings/hooks.py``; docs/architecture/how-to-add.md#a-feature-package): every process that runs a
booking's use cases (the API's ``create_app``, the CLI's every command) registers them, once. That the
registered handlers act, on both databases, is shown by the features' own tests: amending a flight
number re-enrols the flight watch (tests/integration/test_flight_watch.py,
``test_amending_the_flight_number_restarts_the_watch``), a new booking's flight is checked at creation
(tests/integration/test_flight_check_at_creation.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from transfers import features
from transfers.bookings.hooks import HOOKS, Hooks
from transfers.config import Settings
from transfers.flights import enrolment


def test_register_fills_every_moment_once() -> None:
    hooks = Hooks()
    features.register(hooks)
    features.register(hooks)  # start-up may run twice in a process (the tests' several apps)
    assert hooks.new_booking == [enrolment.on_new_booking]
    assert hooks.amendment_applied == [enrolment.on_amendment_applied]


@pytest.fixture
def empty_hooks(monkeypatch: pytest.MonkeyPatch) -> Hooks:
    """The process's registry as a process starts: nothing registered."""
    monkeypatch.setattr(HOOKS, "new_booking", [])
    monkeypatch.setattr(HOOKS, "amendment_applied", [])
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
