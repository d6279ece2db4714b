"""The documentation site works offline: built with ``mkdocs build --strict`` (as ``make docs``), its
pages opened from disk in Chromium with every request that is not a local file aborted and
recorded. The OpenAPI pages render their documents with the Swagger UI copied into the site."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, Route

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    subprocess.run(  # noqa: S603 (our own venv's mkdocs, fixed arguments)
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(target)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return target


@pytest.mark.parametrize(
    ("page", "title", "operation"),
    [
        ("api/booking-api.html", "Transfers booking API", "/api/v1/booking-api/search"),
        ("api/partner-api.html", "", "/booking/search"),
    ],
)
async def test_the_openapi_pages_render_from_disk_with_no_network(
    site: Path, new_context: Callable[[], Awaitable[BrowserContext]], page: str, title: str, operation: str
) -> None:
    elsewhere: list[str] = []

    async def files_only(route: Route) -> None:
        if route.request.url.startswith("file://"):
            await route.continue_()
        else:
            elsewhere.append(route.request.url)
            await route.abort()

    context = await new_context()
    await context.route("**/*", files_only)
    tab = await context.new_page()
    # Generous deadlines: the page parses Swagger UI (1.5 MB) and the inlined document, on a busy machine.
    tab.set_default_timeout(90_000)
    await tab.goto((site / page).as_uri(), wait_until="domcontentloaded")
    await tab.locator(".swagger-ui .info .title").filter(has_text=title).wait_for()
    await tab.locator(".opblock-summary-path", has_text=operation).first.wait_for()
    assert elsewhere == [], elsewhere


async def test_a_guide_page_loads_nothing_from_another_host(
    site: Path, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    elsewhere: list[str] = []

    async def files_only(route: Route) -> None:
        if route.request.url.startswith("file://"):
            await route.continue_()
        else:
            elsewhere.append(route.request.url)
            await route.abort()

    context = await new_context()
    await context.route("**/*", files_only)
    tab = await context.new_page()
    tab.set_default_timeout(90_000)
    await tab.goto((site / "integrators" / "examples.html").as_uri(), wait_until="domcontentloaded")
    await tab.get_by_role("heading", name="Every call, with its request and answer").wait_for()
    await tab.wait_for_load_state("networkidle")
    assert elsewhere == [], elsewhere
