"""One-time form keys (docs/rules/agency-portal.md#once): the portal's ``Idempotency-Key``.

A form that changes something (``Book``, ``Cancel booking``, ``Change``, ``Report a problem``)
carries a hidden ``key`` made when the form was shown (``fresh_key``). Posting it runs the action
through the API's own idempotency store (``idempotency.service.run_idempotent``), under the
client with the key ``agency:{user_id}:{key}``, so a browser's double click, a reload of the
answer or ``Back`` and the button again does the action once:

* the same key and the same form (its fields by meaning, the CSRF token aside): the first answer
  (where it sent the browser) is given again, nothing runs twice;
* the same key with other values: refused (``IDEMPOTENCY_KEY_REUSED``) in words beside the form;
* the same key while the first post still runs (the second click of a double click): this post
  waits, bounded (``WAIT_SECONDS``), for the first one's answer and gives it; still running after
  that, ``IDEMPOTENCY_KEY_IN_USE`` in words, nothing done;
* a refusal (the API's rule beside a field) is not kept: the key is free again, so the person
  fixes the field and sends the same form again. (The API keeps a 4xx answer; a form is there to be
  corrected, so here only what happened is kept.)

A form without a usable key (a page from before the keys, a hand-made post) runs once per post, as
an API request without the header."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request

from transfers.agency.auth import AgencyViewer, services
from transfers.errors import Conflict, DomainError, ErrorCode, Invalid
from transfers.idempotency.fingerprint import fingerprint
from transfers.idempotency.service import run_idempotent

KEY_LIMIT = 64  # fresh_key makes 24 characters; "agency:{user_id}:" + 64 stays far under the store's 255
WAIT_SECONDS = 5.0
_STEP_SECONDS = 0.05
REUSED_WORDS = (
    "This form was already sent with other values, and a form is sent once. "
    "Open the form again from the booking's page to send something else."
)
IN_USE_WORDS = (
    "This form is being sent already (pressed twice?). Open the booking's page in a moment to see the result."
)


def fresh_key() -> str:
    """A form's one-time key, made when the form is shown."""
    return secrets.token_urlsafe(18)


def usable(key: str) -> str | None:
    key = key.strip()
    return key if 0 < len(key) <= KEY_LIMIT and key.isprintable() else None


async def submit_once(
    request: Request,
    viewer: AgencyViewer,
    typed: Mapping[str, str],
    action: Callable[[], Awaitable[str]],
) -> str:
    """Run ``action`` (it does the work and returns where to send the browser) once for the form's
    key (``typed["key"]``); a repeat returns the first run's address. The action's own refusals
    (``DomainError``) pass through, and leave the key unused."""
    key = usable(typed.get("key", ""))
    if key is None:
        return await action()
    fields = {name: value for name, value in typed.items() if name != "key"}
    same_form = fingerprint("POST", request.url.path, "", json.dumps(fields, sort_keys=True).encode())

    async def work() -> tuple[int, bytes]:
        return 303, (await action()).encode()

    svc = services(request)
    waited = 0.0
    while True:
        try:
            answer = await run_idempotent(svc, viewer.client_id, f"agency:{viewer.user_id}:{key}", same_form, work)
        except DomainError as exc:
            if exc.code is ErrorCode.IDEMPOTENCY_KEY_REUSED:
                raise Invalid(ErrorCode.IDEMPOTENCY_KEY_REUSED, REUSED_WORDS) from None
            if exc.code is not ErrorCode.IDEMPOTENCY_KEY_IN_USE:
                raise
            if waited >= WAIT_SECONDS:  # bounded: the first post is stuck; say so rather than wait on
                raise Conflict(ErrorCode.IDEMPOTENCY_KEY_IN_USE, IN_USE_WORDS) from None
            await asyncio.sleep(_STEP_SECONDS)  # the other post of a double click, finishing now
            waited += _STEP_SECONDS
            continue
        return answer.body.decode()


def refused_status(exc: DomainError) -> int:
    """The status of a refused form's page: 409 while the same form is still being sent, else 422."""
    return 409 if exc.code is ErrorCode.IDEMPOTENCY_KEY_IN_USE else 422
