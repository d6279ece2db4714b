"""Request-level helpers the routes share: the authenticated caller and the JSON body."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import orjson
from fastapi import Request

from transfers.api.ratelimit import enforce as enforce_rate_limit
from transfers.auth.service import AuthFailure, PartnerPrincipal
from transfers.clients.models import ClientPrincipal
from transfers.errors import client_suspended, malformed_json, unauthenticated
from transfers.services import Services


def services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def header_value(request: Request, name: bytes) -> str | None:
    """``request.headers.get(name)`` (``name`` lower-case) without building Starlette's ``Headers``:
    the first header of that name, Latin-1, as ``Headers.get`` reads the ASGI scope's list."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return None


async def current_client(request: Request) -> ClientPrincipal:
    try:
        principal = await services(request).auth.client(header_value(request, b"authorization"))
    except AuthFailure as failure:
        if failure.reason == "suspended":
            raise client_suspended() from None
        raise unauthenticated() from None
    # request.state.client_id, written where Starlette's ``State`` keeps it (the scope's "state" dict)
    request.scope.setdefault("state", {})["client_id"] = principal.client_id
    # hardening: after auth, per key (docs/rules/reliability.md#rate-limits)
    await enforce_rate_limit(request, principal.key_prefix)
    return principal


async def current_partner(request: Request) -> PartnerPrincipal:
    try:
        principal = await services(request).auth.partner(request.headers.get("authorization"))
    except AuthFailure:
        # docs/rules/errors.md#shapes: a 401 has the string-code shape on every path, the reverse API's included
        # (only its 404 and 422 keep the shape of docs/rules/errors.md#get-codes, docs/rules/partners.md). A
        # disabled partner's key is refused like an unknown one: partners have no suspended state to tell apart.
        raise unauthenticated("A valid partner bearer API key is required.") from None
    request.state.partner_id = principal.partner_id
    # hardening: after auth, per key (docs/rules/reliability.md#rate-limits)
    await enforce_rate_limit(request, principal.key_prefix)
    return principal


async def json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object, or 400 MALFORMED_JSON (not JSON, invalid UTF-8, NaN, an array). Read by
    Starlette (``Request.body``): a client gone mid-body raises its ``ClientDisconnect``, and a body over
    the limit the ``BodyTooLarge`` of the plumbing's wrapped ``receive`` (``api/middleware.py``)."""
    raw = await request.body()
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise malformed_json("The request body is not valid JSON.") from None
    if not isinstance(value, dict):
        raise malformed_json("The request body must be a JSON object.")
    return value


def query_value(request: Request, name: str) -> str | None:
    """``request.query_params.get(name)`` without building Starlette's ``QueryParams``: the same parse
    (``parse_qsl`` of the Latin-1 query string, blank values kept), the last value of a repeated name."""
    query = request.scope["query_string"]
    if not query:
        return None
    return dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True)).get(name)
