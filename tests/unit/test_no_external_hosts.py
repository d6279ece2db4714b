"""No page the service serves loads anything from another host (/docs was blank offline).

Templates and static files of the console, the portal and the sign-in pages, and the HTML of
``/docs``, are scanned for a script, stylesheet, image, font or frame whose address names a host
(``http://``, ``https://`` or ``//``). Links a person clicks (``<a href>``) may point anywhere."""

from __future__ import annotations

import re
from pathlib import Path

from transfers.api.docs_page import SWAGGER_ASSETS

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "transfers"
# An attribute or CSS url() that makes the browser fetch something by itself.
LOADS = re.compile(
    r"""<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data|srcset)\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|url\(\s*["']?\s*(?:https?:)?//|@import\s+["']?(?:https?:)?//""",
    re.IGNORECASE | re.DOTALL,
)


def served_files() -> list[Path]:
    found = []
    for folder in ("templates", "static"):
        found += [p for p in PACKAGE.rglob(f"{folder}/**/*") if p.is_file() and p.suffix in {".html", ".css", ".js"}]
    return found


def test_no_template_or_static_file_loads_from_another_host() -> None:
    files = served_files()
    assert len(files) > 10, files  # the console's, the portal's and the sign-in templates are found
    offenders = [f"{p.relative_to(PACKAGE)}: {m.group(0)!r}" for p in files for m in [LOADS.search(p.read_text())] if m]
    assert not offenders, offenders


def test_the_docs_page_loads_its_assets_from_the_service() -> None:
    from transfers.app import create_app
    from transfers.config import Settings

    app = create_app(Settings(secret_key="x" * 40), configure_logs=False)
    docs = next(route for route in app.routes if getattr(route, "path", None) == "/docs")
    import asyncio

    html = asyncio.run(docs.endpoint()).body.decode()  # type: ignore[attr-defined]
    assert "/docs/assets/swagger-ui-bundle.js" in html and "/docs/assets/swagger-ui.css" in html
    assert not LOADS.search(html), html
    assert "validatorUrl" in html  # Swagger UI would otherwise ask validator.swagger.io about the document
    assert {"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"} <= {p.name for p in SWAGGER_ASSETS.iterdir()}
