"""``/docs``: the booking API's Swagger UI, served whole from this service (no CDN).

FastAPI's own ``/docs`` loads Swagger UI's script, stylesheet and icon from public CDNs, so on a
machine without internet access (an airport's back office, a laptop on a train) the page is blank.
Here the same page loads them from ``/docs/assets/``, out of the ``fastapi-offline`` distribution
(pinned in pyproject.toml): a maintained PyPI package that ships Swagger UI 5's built files. (The
``swagger-ui-bundle`` package ships Swagger UI 4, which cannot render the OpenAPI 3.1 document
FastAPI generates.) ``validatorUrl: null`` keeps Swagger UI from calling the public validator.

Its Content-Security-Policy: scripts from this service plus the page's one inline start-up script (by
its hash), styles from here (inline ones too: Swagger UI styles what it renders), nothing from
elsewhere, no framing (docs/operations/security.md).
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
# Only the files the page loads; the distribution's directory is served read-only as it is.
SWAGGER_ASSETS = Path(str(files("fastapi_offline") / "static"))


def install_docs(app: FastAPI, *, openapi_url: str = "/openapi.json") -> None:
    """Serve ``/docs`` and its assets; the app must be built with ``docs_url=None``."""
    app.mount(ASSETS_PATH, StaticFiles(directory=SWAGGER_ASSETS), name="docs-assets")

    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{app.title} - Swagger UI",
        swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_PATH}/favicon.png",
        swagger_ui_parameters={"validatorUrl": None},
    )
    body = bytes(page.body)
    headers = {"Content-Security-Policy": content_security_policy(body.decode()), "X-Frame-Options": "DENY"}

    @app.get(DOCS_PATH, include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return HTMLResponse(body, headers=headers)


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def content_security_policy(html: str) -> str:
    """The page's policy, allowing its inline scripts by their SHA-256 (the page is the same every time)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
