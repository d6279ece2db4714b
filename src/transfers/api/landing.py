"""``GET /``: a small page saying what this service is and where its parts are (the root
answered a JSON 404 to the first thing a new user opens). Self-contained: inline style, no script,
no request to another host; its Content-Security-Policy allows exactly that style (by its hash) and
no framing (docs/operations/security.md)."""

from __future__ import annotations

import base64
import hashlib

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

from transfers import __version__
from transfers.api.deps import services

router = APIRouter()

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transfers booking API</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 40rem; padding: 0 1rem; color: #1b1b1b; }}
h1 {{ font-size: 1.5rem; margin-bottom: .25rem; }}
p.meta {{ color: #555; margin-top: 0; }}
li {{ margin: .4rem 0; }}
a {{ color: #1d4f91; }}
code {{ background: #f3f3f3; padding: 0 .25rem; }}
</style>
</head>
<body>
<main>
<h1>Transfers booking API</h1>
<p class="meta">Version {version}, {environment} environment.</p>
<ul>
<li><a href="/docs">API documentation</a> (Swagger UI) and the <a href="/openapi.json">OpenAPI document</a>:
search, book, read and cancel transfers under <code>/api/v1/booking-api</code>.</li>
<li><a href="/console/">Operator console</a>: bookings, clients, partners, deliveries.</li>
<li><a href="/partner/">Partner portal</a>: for transport companies without a server of their own
(hosted partners): bookings to accept, the rate card.</li>
<li><a href="/agency/">Agency portal</a>: for travel agencies: book, follow and fix bookings, the wallet.</li>
<li><a href="/healthz">Health</a> and <a href="/readyz">readiness</a>.</li>
</ul>
</main>
</body>
</html>
"""


_STYLE = _PAGE.split("<style>")[1].split("</style>")[0].replace("{{", "{").replace("}}", "}")
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
HEADERS = {
    "Content-Security-Policy": (
        f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
}


@router.get("/", include_in_schema=False)
async def landing(request: Request) -> HTMLResponse:
    environment = services(request).settings.environment
    return HTMLResponse(_PAGE.format(version=__version__, environment=environment), headers=HEADERS)


# The service's icon (a browser tab's, a bookmark's): a white car on the console's blue, drawn in SVG
# so it is sharp at every size; the web areas link it (webauth/templates/webauth/layout.html) and
# browsers that ask for /favicon.ico by habit get the same picture.
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<rect width="32" height="32" rx="6" fill="#16325c"/>'
    '<path d="M7 19l2.2-5.6A2 2 0 0 1 11.1 12h9.8a2 2 0 0 1 1.9 1.4L25 19v5h-2.5v-2h-13v2H7z" fill="#fff"/>'
    '<circle cx="11" cy="19.5" r="1.5" fill="#16325c"/><circle cx="21" cy="19.5" r="1.5" fill="#16325c"/>'
    "</svg>"
)
_ICON_HEADERS = {"Cache-Control": "public, max-age=86400"}


@router.get("/favicon.svg", include_in_schema=False)
@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    return Response(FAVICON, media_type="image/svg+xml", headers=_ICON_HEADERS)
