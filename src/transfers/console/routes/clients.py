"""``Clients``: the list, ``New client`` (its API key shown once), a client's page with
suspend/activate, its wallets (one per currency, docs/rules/wallet.md#currencies), ``Top up`` (field
``Amount``, and ``Currency`` when it holds several wallets), its keys (create, revoke) and the
statement of one wallet (the default one, or ``?currency=``).
Every action calls the service the CLI uses (``clients.service``: the same ledger entry and audit
row as ``transfers wallet top-up``); managing clients needs ``MANAGE_CLIENTS`` and moving money
``MOVE_MONEY`` (both admin), checked here and hidden from other roles in the templates. Bad input is
shown beside its field with what was typed kept, and changes nothing."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers import money
from transfers.clients import service
from transfers.clients.models import REVERSE_API_PAY_TYPE, ClientStatus, NewClient
from transfers.console.admin_queries import client_detail, client_keys, key_owner, list_clients
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.render import page
from transfers.messages import settings_form, settings_service
from transfers.messages.settings_rules import MessageSettingsInvalid
from transfers.operators.models import Capability
from transfers.partners import fields
from transfers.wallet import repository as wallet_repo
from transfers.wallet.amounts import parse_credit
from transfers.wallet.ledger import API_KINDS
from transfers.webauth.refusals import path_id

router = APIRouter()
STATEMENT_PAGE = 50
PAY_TYPES = ("wallet", REVERSE_API_PAY_TYPE)
_CURRENCY = re.compile(r"[A-Z]{3}")
_PREFIX = re.compile(r"tk_[A-Za-z0-9]{1,28}")
NOTICES = {
    "messages": "The messages to travellers are saved.",
    "suspended": "The client is suspended: its keys get 403 CLIENT_SUSPENDED from now on.",
    "active": "The client is active again.",
    "revoked": "The key is revoked: it gets 401 from now on.",
}


def _typed(form: FormData, name: str, limit: int = 100) -> str:
    value = form.get(name)
    return value[:limit] if isinstance(value, str) else ""


@router.get("/clients")
async def clients_page(request: Request, viewer: Signed) -> Response:
    async with services(request).db.read() as conn:
        rows = await list_clients(conn)
        held = await wallet_repo.wallets_of_clients(conn, [r.id for r in rows])
    return page(
        request,
        "clients/list.html",
        {"active": "Clients", "rows": rows, "wallets": held},
        viewer=viewer,
        title="Clients",
    )


def _new_form(
    request: Request, viewer: Viewer, errors: dict[str, str], typed: dict[str, str], status_code: int = 200
) -> Response:
    return page(
        request,
        "clients/new.html",
        {"active": "Clients", "errors": errors, "typed": typed, "pay_types": PAY_TYPES},
        viewer=viewer,
        title="New client",
        status_code=status_code,
    )


@router.get("/clients/new")
async def new_client_page(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_CLIENTS)
    return _new_form(
        request,
        viewer,
        {},
        {"pay_type": "wallet", "balance": "0.00", "currency": services(request).settings.default_currency},
    )


@router.post("/clients")
async def create_client(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_CLIENTS)
    form = await viewer.form(request)
    typed = {name: _typed(form, name, fields.NAME_MAX + 1) for name in ("name", "pay_type", "currency", "balance")}
    errors: dict[str, str] = {}
    try:
        name = fields.partner_name(typed["name"])  # the same rule for any account name
    except ValueError as exc:
        errors["name"] = f"Name {exc}."
    if typed["pay_type"] not in PAY_TYPES:
        errors["pay_type"] = "Choose how the client pays."
    currency = typed["currency"].strip().upper()
    opening = Decimal(0)
    known = bool(_CURRENCY.fullmatch(currency)) and money.is_currency(currency)
    if not known:
        errors["currency"] = "Currency must be a three-letter ISO 4217 code, like EUR."
    try:  # checked either way, so both mistakes show at once; decimals only against a known currency
        opening = parse_credit(typed["balance"] or "0", currency if known else None, allow_zero=True)
    except ValueError as exc:
        errors["balance"] = str(exc)
    if errors:
        return _new_form(request, viewer, errors, typed, status_code=422)
    if opening > 0:
        viewer.require(Capability.MOVE_MONEY)
    svc = services(request)
    created = await service.create_client(
        svc.db,
        svc.clock,
        NewClient(name=name, pay_type=typed["pay_type"], currency=currency, opening_balance=opening),
        actor=viewer.actor,
    )
    return page(
        request,
        "clients/created.html",
        {
            "active": "Clients",
            "created": created,
            "name": name,
            "heading": f"Client {created.client_id} {name} created",
        },
        viewer=viewer,
        title="Client created",
        status_code=201,
    )


async def _client_page(
    request: Request,
    viewer: Viewer,
    client_id: int,
    *,
    status_code: int = 200,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    notice: str = "",
    problem: str = "",
    message_typed: dict[str, Any] | None = None,
    message_errors: dict[str, str] | None = None,
) -> Response:
    svc = services(request)
    raw_before = request.query_params.get("before", "")
    before = int(raw_before) if raw_before.isascii() and raw_before.isdigit() and len(raw_before) < 18 else None
    asked = request.query_params.get("currency", "")[:10] or None
    async with svc.db.read() as conn:
        client = await client_detail(conn, client_id)
        if client is None:
            raise PageNotFound(f"There is no client {client_id}.")
        keys = await client_keys(conn, client_id)
        wallets = await wallet_repo.wallets_of_client(conn, client_id)
        # the statement the API serves (GET /wallet/entries): the same rows, kinds and balance_after
        shown, entries = await wallet_repo.statement_page(
            conn,
            client_id,
            currency=asked,
            created_from=None,
            created_to=None,
            below_id=before,
            limit=STATEMENT_PAGE + 1,
        )
    if asked is not None and shown is None:
        raise PageNotFound(f"Client {client_id} holds no wallet in {asked!r}.")
    which = f"currency={shown}&" if asked is not None else ""
    older = None
    if len(entries) > STATEMENT_PAGE:
        entries = entries[:STATEMENT_PAGE]
        older = f"{PREFIX}/clients/{client_id}?{which}before={entries[-1].id}#statement"
    # docs/rules/messages.md#settings: the client's messages to its travellers, shown and set here
    settings = await settings_service.get_settings(svc.db, client_id)
    return page(
        request,
        "clients/detail.html",
        {
            "active": "Clients",
            "c": client,
            "keys": keys,
            # the default wallet first: the top-up form's first choice
            "wallets": sorted(wallets, key=lambda w: not w.is_default),
            "statement_currency": shown,
            "example": money.text(Decimal(50), client.currency) if client.currency else "50",
            "statement_query": which,
            "older": older,
            "entries": [replace(e, kind=API_KINDS.get(e.kind, "adjustment")) for e in entries],
            "first_page": before is None,
            "errors": errors or {},
            "typed": typed or {},
            "notice": notice,
            "problem": problem,
            "ms": settings,
            "m_typed": message_typed if message_typed is not None else settings_form.form_values(settings),
            "m_errors": message_errors or {},
            "languages": settings_form.LANGUAGE_CHOICES,
        },
        viewer=viewer,
        title=f"Client {client.name}",
        status_code=status_code,
    )


@router.get("/clients/{client_id}")
async def client_page(request: Request, client_id: str, viewer: Signed) -> Response:
    done = request.query_params.get("done", "")
    notice = NOTICES.get(done, "")
    if done == "topped-up":
        notice = "The wallet is topped up."
    return await _client_page(request, viewer, path_id(client_id, "client"), notice=notice)


@router.post("/clients/{client_id}/top-up")
async def top_up(request: Request, client_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MOVE_MONEY)
    form = await viewer.form(request)
    number = path_id(client_id, "client")
    typed = _typed(form, "amount", 40)
    currency = _typed(form, "currency", 10).strip() or None  # None: the default wallet, as the CLI
    svc = services(request)
    kept = {"amount": typed, "currency": currency or ""}
    if currency is not None:
        async with svc.db.read() as conn:
            held = {w.currency for w in await wallet_repo.wallets_of_client(conn, number)}
        if held and currency not in held:
            return await _client_page(
                request,
                viewer,
                number,
                status_code=422,
                errors={"currency": f"The client holds no {currency} wallet: choose one of its wallets."},
                typed=kept,
            )
    try:
        amount = parse_credit(typed, await service.wallet_currency(svc.db, number, currency))
    except service.ClientNotFound:
        raise PageNotFound(f"There is no client {number}.") from None
    except ValueError as exc:
        return await _client_page(request, viewer, number, status_code=422, errors={"amount": str(exc)}, typed=kept)
    try:
        await service.top_up(svc.db, svc.clock, number, amount, actor=viewer.actor, currency=currency)
    except service.ClientNotFound:
        raise PageNotFound(f"There is no client {number}.") from None
    back = f"currency={currency}&" if currency else ""
    return RedirectResponse(f"{PREFIX}/clients/{number}?{back}done=topped-up", status_code=303)


@router.post("/clients/{client_id}/status")
async def set_status(request: Request, client_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_CLIENTS)
    form = await viewer.form(request)
    number = path_id(client_id, "client")
    wanted = form.get("status")
    if wanted not in (ClientStatus.ACTIVE.value, ClientStatus.SUSPENDED.value):
        return await _client_page(
            request, viewer, number, status_code=422, problem="Choose Suspend or Activate; nothing was changed."
        )
    svc = services(request)
    try:
        await service.set_status(svc.db, svc.clock, number, ClientStatus(wanted), actor=viewer.actor)
    except service.ClientNotFound:
        raise PageNotFound(f"There is no client {number}.") from None
    return RedirectResponse(f"{PREFIX}/clients/{number}?done={wanted}", status_code=303)


@router.post("/clients/{client_id}/keys")
async def create_key(request: Request, client_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_CLIENTS)
    await viewer.form(request)
    number = path_id(client_id, "client")
    svc = services(request)
    try:
        created = await service.issue_client_key(svc.db, svc.clock, number, actor=viewer.actor)
    except service.ClientNotFound:
        raise PageNotFound(f"There is no client {number}.") from None
    return page(
        request,
        "clients/created.html",
        {"active": "Clients", "created": created, "heading": f"New API key for client {number}"},
        viewer=viewer,
        title="New API key",
        status_code=201,
    )


@router.post("/clients/{client_id}/keys/revoke")
async def revoke_key(request: Request, client_id: str, viewer: Signed) -> Response:
    """Revokes a key of this client only: a prefix of another client's key (or a partner's), edited
    into the form, is refused as unknown with nothing done."""
    viewer.require(Capability.MANAGE_CLIENTS)
    form = await viewer.form(request)
    number = path_id(client_id, "client")
    prefix = _typed(form, "prefix", 40).strip()
    svc = services(request)
    async with svc.db.read() as conn:
        owner = await key_owner(conn, prefix) if _PREFIX.fullmatch(prefix) else None
    if owner != number:
        return await _client_page(
            request, viewer, number, status_code=404, problem="This client has no such key; nothing was changed."
        )
    await service.revoke_key(svc.db, svc.clock, prefix, actor=viewer.actor)
    return RedirectResponse(f"{PREFIX}/clients/{number}?done=revoked", status_code=303)


@router.post("/clients/{client_id}/messages")
async def save_messages(request: Request, client_id: str, viewer: Signed) -> Response:
    """The client's message settings (docs/rules/messages.md#settings), as ``transfers clients messages``
    sets them (``settings_service``, audited with the operator); a refusal beside its field, nothing saved."""
    viewer.require(Capability.MANAGE_CLIENTS)
    form = await viewer.form(request)
    number = path_id(client_id, "client")
    svc = services(request)
    typed = settings_form.typed_values(form)
    try:
        current = await settings_service.get_settings(svc.db, number)
        change = settings_form.change_of(typed, current)
        await settings_service.update_settings(svc.db, svc.clock, number, change, actor=viewer.actor)
    except settings_service.MessageClientNotFound:
        raise PageNotFound(f"There is no client {number}.") from None
    except MessageSettingsInvalid as refusal:
        errors = settings_form.field_error(refusal)
        return await _client_page(request, viewer, number, status_code=422, message_typed=typed, message_errors=errors)
    return RedirectResponse(f"{PREFIX}/clients/{number}?done=messages#h-messages", status_code=303)
