"""A request signed by hand, with a timestamp of our choosing, and the check of a signing secret
given on the command line.

``PartnerClient`` always signs "now" (that is its job), so the replay-protection check cannot go
through it: this sends the same body bytes, the same headers and the same Standard Webhooks
signature (``partners.signing.signature_headers``) with an old timestamp. Only the status code
matters to the check, so the body of the answer is not read.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import httpx
import orjson

from transfers.partners.client import CallResult, Outcome, PartnerEndpoint
from transfers.partners.conformance.judging import ms
from transfers.partners.signing import SECRET_PREFIX, signature_headers


def secret_problem(secret: str) -> str | None:
    """Why ``secret`` cannot be a signing secret, or None."""
    if not secret.startswith(SECRET_PREFIX):
        return "must be the whsec_... value printed by `transfers partners create`"
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except ValueError:
        return "the part after whsec_ is not base64"
    return None if key else "the part after whsec_ is empty"


async def post_signed_at(
    endpoint: PartnerEndpoint, path: str, payload: dict[str, Any], *, timestamp: int, wait: float
) -> CallResult:
    """POST ``payload`` to the partner as the service would, but signed at ``timestamp`` (Unix
    seconds). Like ``PartnerClient``: no redirects followed, no proxy from the environment."""
    body = orjson.dumps(payload)
    headers = {
        "Authorization": f"Bearer {endpoint.outbound_token}",
        "Accept": "application/json",
        "Content-Type": "application/json",
        **signature_headers(endpoint.signing_secret, body, timestamp=timestamp),
    }
    started = time.perf_counter()
    try:
        async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=wait) as http:
            response = await http.post(endpoint.base_url.rstrip("/") + path, content=body, headers=headers)
    except httpx.TimeoutException:
        return CallResult("timeout", None, None, "timeout", ms(time.perf_counter() - started))
    except httpx.TransportError as exc:
        return CallResult("connect_error", None, None, type(exc).__name__, ms(time.perf_counter() - started))
    duration = ms(time.perf_counter() - started)
    status = response.status_code
    outcome: Outcome = "ok" if status < 300 else "redirect" if status < 400 else "http_error"
    return CallResult(outcome, status, None, None, duration)
