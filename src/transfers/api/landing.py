"""``GET /``: a small page saying what this service is and where its parts are (the root
answered a JSON 404 to the first thing a new user opens). Self-contained: inline style, no script,
no request to another host; its Content-Security-Policy allows exactly that style (by its hash) and
no framing (docs/operations/security.md)."""

from __future__ import annotations

import base64
import hashlib

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse

from transfers import __version__
from transfers.api.deps import services

router = APIRouter()

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transfers booking API</title>
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
        f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
}


@router.get("/", include_in_schema=False)
async def landing(request: Request) -> HTMLResponse:
    environment = services(request).settings.environment
    return HTMLResponse(_PAGE.format(version=__version__, environment=environment), headers=HEADERS)
