"""A client-webhook delivery's outcome in words (docs/rules/webhooks.md#delivery-log): what the API's
delivery log (``last_outcome``) and the agency portal show. Pure.

``delivered``, ``HTTP 503``, ``no answer within 5 s``, ``no answer: could not connect``, ``refused:
private address``: the sender stores its failures in these words already (``webhooks/guard.py``).
Rows written before it did hold a transport's exception name (``ClientConnectorError``) or the SSRF
guard's own text with the address a name resolved to; those are told in the same words here, so
no page or answer ever shows either.
"""

from __future__ import annotations

import re

from transfers.webhooks.guard import REFUSED

DELIVERED = "delivered"
NOT_SENT = "not sent yet"
_EXCEPTION_NAME = re.compile(r"^[A-Z][A-Za-z]*(?:Error|Timeout|Exception|URL|Redirects)\b")
_NO_ANSWER_OLD = re.compile(r"^no answer within ([\d.]+)s\b")
_AFTER = re.compile(r"^(.*?)(; (?:gave up|tried once).*)$", re.S)  # the engine's "<cause>; gave up 24 h after ..."


def outcome(status: str, attempts: int, last_http_status: int | None, last_error: str | None) -> str:
    """The delivery's outcome so far: ``delivered``, or its last attempt's failure, or ``not sent yet``."""
    if status == DELIVERED:
        return DELIVERED
    text = (last_error or "").strip()
    if text:
        return failure(text, last_http_status)
    if last_http_status is not None:
        return f"HTTP {last_http_status}"
    return NOT_SENT if attempts == 0 else "no answer"


def failure(text: str, last_http_status: int | None = None) -> str:
    """A stored failure text in words (the words themselves when it is one already)."""
    if match := _AFTER.match(text):
        return failure(match.group(1), last_http_status) + match.group(2)
    if text.startswith("SSRF guard"):
        return REFUSED
    if match := _NO_ANSWER_OLD.match(text):
        return f"no answer within {match.group(1)} s"
    if _EXCEPTION_NAME.match(text):
        return f"HTTP {last_http_status}" if last_http_status else "no answer"
    return text
