"""Browser tests of the operator console (and the partner portal): Playwright's async API driving
Debian's Chromium (``/usr/bin/chromium``; ``make install-test`` installs it) against the service
served on loopback by the session's ``service`` fixture (``tests/conftest.py``), which mounts the
console at ``/console``.

Fixtures:
    browser          one Chromium for the whole session
    make_operator    creates an operator through the same service as ``transfers operators create``
    console_as       ``page = await console_as("admin")``: a fresh browser context signed in through the
                     real sign-in form as a new operator of that role (``page.operator`` has its row)
    console_url      the console's base URL (``.../console``)
    shoot            ``await shoot(page, "dashboard")`` takes a full-page screenshot; it replaces
                     ``docs/screenshots/dashboard.png`` only when ``TRANSFERS_UPDATE_SCREENSHOTS=1`` (so
                     an ordinary run leaves the repository unchanged; refresh them when pages change)

Everything is async (the server runs on the test session's event loop, so the sync API would block it).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.operators import service as operators
from transfers.operators.models import Role

CHROMIUM = os.environ.get("TRANSFERS_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "correct horse battery staple"
_numbers = itertools.count(1)


@dataclass(frozen=True)
class TestOperator:
    operator_id: int
    email: str
    role: Role
    password: str


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield chromium
        await chromium.close()


@pytest.fixture(scope="session")
def console_url(service: LiveServer) -> str:
    return f"{service.url}/console"


MakeOperator = Callable[..., Awaitable[TestOperator]]


@pytest.fixture(scope="session")
def make_operator(db: Database, clock: ShiftedClock) -> MakeOperator:
    async def make(role: str = "admin", *, email: str | None = None, password: str = PASSWORD) -> TestOperator:
        address = email or f"op{next(_numbers)}-{os.getpid()}-{role}@example.com"
        created = await operators.create_operator(
            db, clock, email=address, role=Role(role), password=password, actor="tests"
        )
        return TestOperator(created.operator_id, created.email, created.role, password)

    return make


async def sign_in(page: Page, console_url: str, email: str, password: str) -> None:
    await page.goto(f"{console_url}/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()


class ConsolePage:
    """A signed-in page plus its operator (``page`` is a Playwright Page)."""

    def __init__(self, page: Page, operator: TestOperator, context: BrowserContext) -> None:
        self.page = page
        self.operator = operator
        self.context = context


ConsoleAs = Callable[..., Awaitable[ConsolePage]]


@pytest.fixture
async def new_context(browser: Browser) -> AsyncIterator[Callable[[], Awaitable[BrowserContext]]]:
    """Fresh, isolated browser contexts (own cookies), closed after the test."""
    contexts: list[BrowserContext] = []

    async def make() -> BrowserContext:
        context = await browser.new_context(viewport={"width": 1360, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        await context.close()


@pytest.fixture
def console_as(
    new_context: Callable[[], Awaitable[BrowserContext]], make_operator: MakeOperator, console_url: str
) -> ConsoleAs:
    async def open_as(role: str = "admin") -> ConsolePage:
        operator = await make_operator(role)
        context = await new_context()
        page = await context.new_page()
        await sign_in(page, console_url, operator.email, operator.password)
        await page.wait_for_url(f"{console_url}/")
        return ConsolePage(page, operator, context)

    return open_as


@pytest.fixture(scope="session")
def shoot(workdir: Path) -> Callable[[Page, str], Awaitable[None]]:
    update = os.environ.get("TRANSFERS_UPDATE_SCREENSHOTS") == "1"
    folder = SCREENSHOTS if update else workdir / "screenshots"

    async def save(page: Page, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{name}.png"
        await page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000  # a real picture of a page, not an empty one

    return save
