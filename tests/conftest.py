"""Shared fixtures: one migrated database per test session (SQLite by default, PostgreSQL when
``TRANSFERS_TEST_DATABASE_URL`` names one), the service served over real HTTP, and helpers.

Tests isolate themselves by data, not by truncation: every test creates its own clients (and
partners, disabled again afterwards), so the suite runs the same on both databases and the
invariant checks can run against everything the session wrote.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database

if TYPE_CHECKING:
    from tests.servers import LiveServer

# The app, the migrations and the servers are imported where they are used, not here: the pure tests
# (make test-fast) then start without importing the whole service (seconds on a busy machine).


def _plain(url: str) -> str:
    """postgresql://... whichever way the URL was written (postgres://, postgresql+asyncpg://): tests hand
    it to asyncpg's own ``connect`` too, which knows only the plain form; Settings resolves it for the app."""
    if url.startswith(("postgres://", "postgresql+asyncpg://")):
        return "postgresql://" + url.split("://", 1)[1]
    return url


PG_URL = _plain(os.environ.get("TRANSFERS_TEST_DATABASE_URL", ""))
ON_POSTGRES = PG_URL.startswith("postgres")


# Markers by directory (declared in pyproject.toml): the slow kinds of test, so ``make test-fast`` can leave
# them out and CI can schedule them. A file elsewhere that is one of these kinds marks itself.
DIRECTORY_MARKERS = {"browser": "browser", "fuzz": "fuzz", "process": "process"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests_root = Path(__file__).resolve().parent
    for item in items:
        relative = item.path.resolve().relative_to(tests_root) if item.path.is_relative_to(tests_root) else None
        if relative is not None and relative.parts[0] in DIRECTORY_MARKERS:
            item.add_marker(DIRECTORY_MARKERS[relative.parts[0]])
    if ON_POSTGRES:
        return
    skip = pytest.mark.skip(reason="PostgreSQL-only (set TRANSFERS_TEST_DATABASE_URL; .ci/run does)")
    for item in items:
        if "pg_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="transfers-tests-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="session")
def database_url(workdir: Path) -> str:
    if PG_URL:
        url = Settings(database_url=PG_URL).resolved_database_url
    else:
        url = f"sqlite+aiosqlite:///{workdir / 'test.sqlite3'}"
    from transfers.db.migrate import upgrade

    upgrade(url)
    return url


@pytest.fixture(scope="session")
def plain_database_url(database_url: str) -> str:
    """The same database in the form operators write it (for CLI subprocesses)."""
    return database_url.replace("postgresql+asyncpg://", "postgresql://").replace("sqlite+aiosqlite://", "sqlite://")


def make_settings(database_url: str, workdir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "environment": "sandbox",
        "sandbox_partner": False,
        "embedded_worker": False,
        "secret_key": "test-secret-key-not-for-production",
        "log_level": "WARNING",
        "partner_timeout_seconds": 1.0,
        "partner_create_budget_seconds": 1.0,
        "rate_limit_per_minute": 100_000,
        "rate_limit_burst": 100_000,
        # Tests register partners and search at once on one shared app: no search-side partner
        # snapshot here. Its 1 s default is tested on its own (tests/api/test_partner_directory.py).
        "partner_cache_seconds": 0.0,
        # The flight tests drive the watch's passes themselves; the check at creation is tested on its own
        # (tests/integration/test_flight_check_at_creation.py).
        "flight_check_at_creation": False,
        # Each app's pools hold up to 3.5 x this on PostgreSQL (docs/operations/scaling.md); the suite keeps
        # several apps open at once beside the server's max_connections of 100, so a test app's pools are small.
        "database_pool_size": 4,
        # Every test signs in from 127.0.0.1: the per-address limit (10 a minute) is tested on an app of its
        # own (tests/security/test_signin_limits.py).
        "signin_attempts_per_minute": 100_000,
        # The suite's fake partners and webhook receivers listen on loopback, which the SSRF guards refuse
        # by default; tests of the guards themselves set these back to False
        # (tests/clientapi/test_webhook_guard.py, tests/integration/test_partner_transport_limits.py).
        "allow_private_partner_urls": True,
        "allow_private_webhook_urls": True,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture(scope="session")
def settings(database_url: str, workdir: Path) -> Settings:
    return make_settings(database_url, workdir)


@pytest.fixture(scope="session")
def clock() -> ShiftedClock:
    return ShiftedClock()


@pytest.fixture(scope="session")
async def db(database_url: str) -> AsyncIterator[Database]:
    # Small: setup and checks only; races build their own Database (PostgreSQL allows 100 connections).
    database = Database(database_url, pool_size=5, application_name="transfers-tests")
    yield database
    await database.dispose()


@pytest.fixture(scope="session")
async def service(settings: Settings, clock: ShiftedClock) -> AsyncIterator[LiveServer]:
    """The service on a real loopback port (worker not embedded: tests drive it explicitly)."""
    from tests.servers import LiveServer
    from transfers.app import create_app

    app = create_app(settings, clock=clock, configure_logs=False)
    server = await LiveServer(app).start()
    yield server
    await server.stop()


@pytest.fixture(autouse=True)
def _features(request: pytest.FixtureRequest) -> None:
    """The feature packages registered with the bookings (``transfers/features.py``), as ``create_app`` and
    the CLI do at start-up, for the tests that build their own ``Services`` and call the use cases directly.
    Not for tests/unit (the pure tests import no feature); registering again is a no-op."""
    if "/unit/" in str(request.node.path):
        return
    from transfers import features

    features.register()


@pytest.fixture(autouse=True)
def _reset_clock(clock: ShiftedClock) -> Iterator[None]:
    yield
    clock.offset = type(clock.offset)()


@pytest.fixture(autouse=True)
def _restore_public_url() -> Iterator[None]:
    """The process's public base URL as it was before the test (``tests/servers.kept_public_url``)."""
    from tests.servers import kept_public_url

    with kept_public_url():
        yield


@pytest.fixture(autouse=True)
def _cheap_password_hashes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id at its lowest cost (1 pass over 8 KiB) in the tests outside tests/unit.

    Production's cost (RFC 9106's second set: 64 MiB, 3 passes, ``webauth/passwords.py``) took 0.35 s
    per hash and 0.22 s per check here, and every agency, console and portal test hashes two or three
    passwords and checks one at sign-in. The hashes stay argon2id, checked through the same code; the
    production parameters are asserted by tests/unit/test_webauth_rules.py (unit tests keep them) and
    used by every ``transfers`` subprocess of tests/process."""
    if "/unit/" in str(request.node.path):
        return
    from argon2 import PasswordHasher

    from transfers.webauth import passwords

    monkeypatch.setattr(passwords, "_HASHER", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


@pytest.fixture(scope="session")
async def http(service: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        yield client


class ClientFactory:
    """Creates clients through the same use case the CLI uses; returns (client_id, api_key)."""

    def __init__(self, db: Database, clock: ShiftedClock) -> None:
        self.db = db
        self.clock = clock
        self.counter = 0

    async def __call__(
        self,
        *,
        balance: str = "1000.00",
        pay_type: str = "wallet",
        currency: str = "EUR",
        can_create: bool = True,
        can_cancel: bool = True,
    ) -> tuple[int, str]:
        from transfers.clients import service as client_service
        from transfers.clients.models import NewClient

        self.counter += 1
        created = await client_service.create_client(
            self.db,
            self.clock,
            NewClient(
                name=f"Test agency {self.counter}",
                pay_type=pay_type,
                currency=currency,
                opening_balance=Decimal(balance),
                can_create=can_create,
                can_cancel=can_cancel,
            ),
            actor="tests",
        )
        return created.client_id, created.api_key


@pytest.fixture(scope="session")
def make_client(db: Database, clock: ShiftedClock) -> ClientFactory:
    return ClientFactory(db, clock)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class PartnerFactory:
    """Serves FakePartners on loopback and registers them; all are disabled again after the test,
    so searches in later tests only see their own partners."""

    def __init__(self, db: Database, clock: ShiftedClock, settings: Settings) -> None:
        from transfers.partners.secrets_box import SecretBox, resolve_secret_key

        self.db, self.clock = db, clock
        self.box = SecretBox(resolve_secret_key(settings))
        self.servers: list[LiveServer] = []
        self.partner_ids: list[int] = []

    async def __call__(
        self, *, airports: tuple[str, ...] = ("LHR",), markup: str = "0", name: str | None = None, **fake: Any
    ) -> tuple[Any, int, str]:
        """Returns (fake partner, partner_id, partner API key)."""
        from tests.fake_partner import FakePartner
        from tests.servers import LiveServer
        from transfers.partners.service import register_partner

        partner = FakePartner(**fake)
        if name:
            partner.name = name
        server = await LiveServer(partner.app()).start()
        self.servers.append(server)
        partner.url = server.url
        registered = await register_partner(
            self.db,
            self.clock,
            self.box,
            name=partner.name,
            base_url=server.url,
            airports=airports,
            markup_percent=Decimal(markup),
            allow_private=True,
            actor="tests",
        )
        partner.signing_secret = registered.signing_secret
        partner.token = registered.outbound_token
        self.partner_ids.append(registered.partner_id)
        return partner, registered.partner_id, registered.api_key

    async def close(self) -> None:
        from transfers.partners import repository as partners_repo

        async with self.db.write() as conn:
            for partner_id in self.partner_ids:
                await partners_repo.set_status(conn, partner_id, "disabled")
        await asyncio.gather(*(server.stop() for server in self.servers))


@pytest.fixture
async def make_partner(db: Database, clock: ShiftedClock, settings: Settings) -> AsyncIterator[PartnerFactory]:
    factory = PartnerFactory(db, clock, settings)
    yield factory
    await factory.close()


@pytest.fixture(autouse=True)
def _money_invariants(request: pytest.FixtureRequest) -> None:
    """After every test that touches the database: balances equal ledgers, one debit per paid
    booking, one refund exactly for refunded statuses, audit trails that follow the state machine.

    Sync, and asking for the checks only when the test uses the database: a pure test (tests/unit,
    ``make test-fast``) then never sets up the session database at all."""
    touches_db = "/unit/" not in str(request.node.path) and (
        "db" in request.fixturenames or "http" in request.fixturenames
    )
    if touches_db:
        request.getfixturevalue("_checked_invariants")


_INVARIANT_RUNS = [0]
# Every 25th check on PostgreSQL refreshes the planner's statistics first. This machine's PostgreSQL runs
# with autovacuum off, so the session database (one for the whole suite, growing test by test) kept the
# statistics of its empty tables: the books' checks below then joined journal_lines by nested loops,
# 1.5 s a test by the middle of the suite and growing (a CI run's PostgreSQL half went from 19 min to
# well over 40). A deployment's autovacuum keeps them; the suite does it here.
_ANALYZE_EVERY = 25


@pytest.fixture
async def _checked_invariants(db: Database) -> AsyncIterator[None]:
    yield
    _INVARIANT_RUNS[0] += 1
    if db.engine.dialect.name == "postgresql" and _INVARIANT_RUNS[0] % _ANALYZE_EVERY == 1:
        from sqlalchemy import text

        async with db.engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("ANALYZE"))
    from tests.booking_invariants import check_booking_invariants
    from tests.invariants import check_event_invariants, check_statement_invariants, check_wallet_invariants

    await check_wallet_invariants(db)
    await check_statement_invariants(db)
    await check_event_invariants(db)
    await check_booking_invariants(db)
    from transfers.accounting import service as books

    # the journal reconciles after every test (docs/rules/statements.md#operators)
    assert await books.ledger_check(db) is None


# --- hosted partners (tests/hosted/conftest.py: HostedFactory) ------------------------------


@pytest.fixture
async def make_hosted(db: Database, clock: ShiftedClock, settings: Settings) -> AsyncIterator[Any]:
    """Registers hosted partners with a rate card (``HostedFactory``); disabled again after the test."""
    from tests.hosted.conftest import HostedFactory

    factory = HostedFactory(db, clock, settings)
    yield factory
    await factory.close()
