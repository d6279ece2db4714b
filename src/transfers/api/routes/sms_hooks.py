"""The SMS provider's callbacks (docs/rules/messages.md#opt-out): ``POST /hooks/sms/twilio`` (replies to
our texts) and ``POST /hooks/sms/twilio/status`` (delivery receipts), form-encoded as Twilio posts them.

The signature is checked first: a missing or wrong ``X-Twilio-Signature`` is 403 and records nothing.
A signed request is answered 200 with empty TwiML (``<Response/>``: no reply is texted back), whatever
its fields say; a form that cannot be read is never a 500 (its fields are what could be read, and the
signature over them decides). Not in the client API's OpenAPI document: only the provider calls these.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from transfers.api.deps import services
from transfers.messages import callbacks
from transfers.messages.sms.provider import INBOUND_PATH, STATUS_PATH
from transfers.messages.sms.signature import HEADER

router = APIRouter(include_in_schema=False)

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
MAX_FIELDS = 200  # Twilio's callbacks carry a few dozen


def _fields(raw: bytes) -> list[tuple[str, str]] | None:
    try:
        return parse_qsl(raw.decode("utf-8", errors="replace"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:  # more fields than MAX_FIELDS
        return None


def _path_and_query(request: Request) -> str:
    query = request.scope.get("query_string", b"").decode("latin-1")
    return request.url.path + (f"?{query}" if query else "")


async def _verified(request: Request) -> list[tuple[str, str]] | None:
    fields = _fields(await request.body())
    if fields is None:
        return None
    svc = services(request)
    if not callbacks.signed(svc.settings, _path_and_query(request), fields, request.headers.get(HEADER)):
        return None
    return fields


def _refused() -> Response:
    return PlainTextResponse("The request is not signed by the SMS provider.", status_code=403)


def _twiml() -> Response:
    return Response(EMPTY_TWIML, media_type="text/xml")


@router.post(INBOUND_PATH)
async def sms_reply(request: Request) -> Response:
    fields = await _verified(request)
    if fields is None:
        return _refused()
    await callbacks.reply(services(request), fields)
    return _twiml()


@router.post(STATUS_PATH)
async def sms_status(request: Request) -> Response:
    fields = await _verified(request)
    if fields is None:
        return _refused()
    await callbacks.receipt(services(request), fields)
    return _twiml()
