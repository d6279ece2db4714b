"""``FX`` (docs/rules/fx.md#console): the exchange rates in use today (each with its source, its date and
its age; a stale one is marked, as ``transfers doctor`` reports it), the scheduled fetch's last try, the
platform's position per currency (the FX accounts, docs/rules/fx.md#position, as ``transfers fx
position``) and, for an admin
(``SET_RATES``), ``Set rate`` (fields ``Currency``, ``Rate``, ``As of``): the use case of ``transfers fx
set``, with its audit row naming the operator. Bad input is shown beside its field with what was typed
kept, and writes nothing."""

from __future__ import annotations

from datetime import date
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.accounting import service as books
from transfers.console.auth import PREFIX, Signed, Viewer, services
from transfers.console.render import page
from transfers.fx import service as fx
from transfers.fx.rates import RateError, check_currency, parse_rate
from transfers.operators.models import Capability

router = APIRouter()
FIELDS = ("currency", "rate", "as_of")


async def _fx_page(
    request: Request,
    viewer: Viewer,
    *,
    status_code: int = 200,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    notice: str = "",
) -> Response:
    svc = services(request)
    state = await fx.freshness(svc.db, svc.clock, svc.settings)
    today = fx.today(svc.clock)
    rates = [
        {**state.rates[code].as_dict(), "age": (today - state.rates[code].as_of).days, "stale": code in state.stale}
        for code in sorted(state.rates)
    ]
    context: dict[str, Any] = {
        "active": "FX",
        "rates": rates,
        "provider": state.provider,
        "fetch": state.fetch,
        "max_age": svc.settings.fx_max_age_days,
        "cache_seconds": svc.settings.fx_cache_seconds,
        "today": today.isoformat(),
        "position": [{"currency": c, "balance": b} for c, b in await books.fx_position(svc.db)],
        "errors": errors or {},
        "typed": typed or {"as_of": today.isoformat()},
        "notice": notice,
    }
    return page(request, "fx.html", context, viewer=viewer, title="Exchange rates", status_code=status_code)


def _sentence(exc: RateError) -> str:
    said = str(exc)
    return f"{said[:1].upper()}{said[1:]}."


@router.get("/fx")
async def fx_page(request: Request, viewer: Signed) -> Response:
    done = request.query_params.get("done", "")[:3]
    notice = f"The {done} rate is set." if done.isalpha() and done.isupper() else ""
    return await _fx_page(request, viewer, notice=notice)


@router.post("/fx/rates")
async def set_rate(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.SET_RATES)
    form = await viewer.form(request)
    typed = {name: str(form.get(name) or "")[:40] for name in FIELDS}
    svc = services(request)
    errors: dict[str, str] = {}
    currency = typed["currency"].strip()
    try:
        check_currency(currency, svc.settings.enabled_currencies)
    except RateError as exc:
        errors["currency"] = _sentence(exc)
    try:
        parse_rate(typed["rate"].strip())
    except RateError as exc:
        errors["rate"] = _sentence(exc)
    as_of: date | None = None
    if typed["as_of"].strip():
        try:
            as_of = date.fromisoformat(typed["as_of"].strip())
        except ValueError:
            errors["as_of"] = "Enter the date the rate is for, like 2026-11-27 (today or earlier)."
    if not errors:
        try:
            await fx.set_rate(
                svc.db, svc.clock, svc.settings, currency, typed["rate"].strip(), as_of, actor=viewer.actor
            )
        except RateError as exc:
            errors["as_of"] = _sentence(exc)
    if errors:
        return await _fx_page(request, viewer, status_code=422, errors=errors, typed=typed)
    return RedirectResponse(f"{PREFIX}/fx?done={currency}", status_code=303)
