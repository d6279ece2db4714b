"""``Partners``: the list with each partner's health over the last hour, ``New partner`` (credentials
shown once), a partner's page (its health, edit airports/markup/base URL, enable/disable, rotate
the signing secret, run the conformance check and show its table). Every action calls the service
the CLI uses (``partners.service``, ``partners.editing``, ``partners.rotation``), which writes the
audit row with the operator; all of them need ``MANAGE_PARTNERS`` (admin), checked here and hidden
from other roles in the templates."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.cancellation.policy import Policy, PolicyError, from_json, parse_spec
from transfers.console.admin_queries import last_check, partner_key_prefixes, partner_row
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.render import page
from transfers.operators.models import Capability
from transfers.partners import conformance, editing, fields, health_repository, rotation, service
from transfers.partners.models import InvalidPartnerUrl, check_base_url
from transfers.ride import repository as ride_repo
from transfers.webauth.refusals import path_id

router = APIRouter()
MAX_URL_CHARS = 2000
MAX_AIRPORTS_CHARS = 2000
NOTICES = {
    "updated": "The partner's settings are saved; searches use them within a few seconds.",
    "unchanged": "Nothing was changed: the values are the ones already saved.",
    "enabled": "The partner is enabled: searches ask it again.",
    "disabled": "The partner is disabled: searches no longer ask it (its bookings still get their messages).",
    "checked-pass": "The conformance check passed (the table is below).",
    "checked-fail": "The conformance check failed: the table below says which checks and why.",
}
FIELDS = ("name", "base_url", "airports", "markup", "cancellation_policy", "follow_flight_minutes", "free_wait_minutes")
FLIGHT_FIELDS = {  # docs/rules/flights.md#partner-policy: the form's label and range of each
    "follow_flight_minutes": ("Follow flights", service.FOLLOW_FLIGHT_RANGE),
    "free_wait_minutes": ("Free wait", service.FREE_WAIT_RANGE),
}
MAX_POLICY_CHARS = 200

COVERAGE_WINDOW = timedelta(days=30)


def _policy_spec(stored: Any) -> str:
    """A stored default policy in the CLI's short form (``24:0,0:100``); empty for none."""
    return "" if stored is None else from_json(stored).spec()


def _percent(value: Decimal) -> str:
    return f"{value.normalize():f}"  # 10.000 -> "10", never "1E+1"


def _typed(form: FormData, name: str, limit: int) -> str:
    value = form.get(name)
    return value[:limit] if isinstance(value, str) else ""


def _checked(form: FormData, errors: dict[str, str], *, with_name: bool) -> dict[str, Any]:
    """The form's fields checked by the CLI's own rules (``partners/fields.py``); each error is kept
    for its field, and the clean values of the fields that passed are answered."""
    clean: dict[str, Any] = {}
    if with_name:
        try:
            clean["name"] = fields.partner_name(_typed(form, "name", fields.NAME_MAX + 1))
        except ValueError as exc:
            errors["name"] = f"Name {exc}."
    airports = _typed(form, "airports", MAX_AIRPORTS_CHARS + 1)
    try:
        if len(airports) > MAX_AIRPORTS_CHARS:
            raise ValueError(f"at most {MAX_AIRPORTS_CHARS} characters")
        clean["airports"] = fields.service_area(airports)
    except ValueError as exc:
        errors["airports"] = f"Airports: {exc}."
    try:
        clean["markup"] = fields.markup(_typed(form, "markup", 50).strip() or "0")
    except ValueError as exc:
        errors["markup"] = f"Markup {exc}."
    policy = _typed(form, "cancellation_policy", MAX_POLICY_CHARS + 1).strip()
    try:
        if len(policy) > MAX_POLICY_CHARS:
            raise PolicyError(f"at most {MAX_POLICY_CHARS} characters")
        # the CLI's --cancellation-policy: empty or "none" is free until pickup (docs/rules/cancellation.md)
        clean["cancellation_policy"] = None if policy.lower() in ("", "none") else parse_spec(policy)
    except PolicyError as exc:
        errors["cancellation_policy"] = f"Cancellation policy: {exc}."
    for name, (label, (low, high)) in FLIGHT_FIELDS.items():
        typed = _typed(form, name, 20).strip()
        if not typed:
            continue  # not on this form (a new partner): the defaults apply
        if not (typed.isascii() and typed.isdigit()) or not low <= int(typed) <= high:
            errors[name] = f"{label}: a whole number of minutes from {low} to {high}."
        else:
            clean[name] = int(typed)
    return clean


def _check_url(svc_allow_private: bool, form: FormData, errors: dict[str, str]) -> str | None:
    url = _typed(form, "base_url", MAX_URL_CHARS + 1).strip()
    if len(url) > MAX_URL_CHARS:
        errors["base_url"] = f"Base URL: at most {MAX_URL_CHARS} characters."
        return None
    try:
        return check_base_url(url, allow_private=svc_allow_private)
    except InvalidPartnerUrl as exc:
        errors["base_url"] = f"Base URL: {str(exc).removeprefix('the partner URL ')}."
        return None


@router.get("/partners")
async def partners_page(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    async with svc.db.read() as conn:
        report = await health_repository.last_hour(conn, svc.clock.now())
    listed = {p.partner_id: p for p in await service.list_partners(svc.db)}
    rows = [
        (listed[h.partner_id], h, _percent(listed[h.partner_id].markup_percent))
        for h in report
        if h.partner_id in listed
    ]
    return page(request, "partners/list.html", {"active": "Partners", "rows": rows}, viewer=viewer, title="Partners")


@router.get("/partners/new")
async def new_partner_page(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    return _new_form(request, viewer, {}, {"markup": str(services(request).settings.default_markup_percent)})


def _new_form(
    request: Request, viewer: Viewer, errors: dict[str, str], typed: dict[str, str], status_code: int = 200
) -> Response:
    return page(
        request,
        "partners/new.html",
        {"active": "Partners", "errors": errors, "typed": typed},
        viewer=viewer,
        title="New partner",
        status_code=status_code,
    )


@router.post("/partners")
async def create_partner(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    form = await viewer.form(request)
    svc = services(request)
    allow_private = svc.settings.private_partner_urls_allowed
    errors: dict[str, str] = {}
    values = _checked(form, errors, with_name=True)
    url = _check_url(allow_private, form, errors)
    typed = {name: _typed(form, name, MAX_URL_CHARS) for name in FIELDS}
    if errors or url is None:
        return _new_form(request, viewer, errors, typed, status_code=422)
    created = await service.register_partner(
        svc.db,
        svc.clock,
        svc.box,
        name=values["name"],
        base_url=url,
        airports=values["airports"],
        markup_percent=values["markup"],
        allow_private=allow_private,
        actor=viewer.actor,
        cancellation_policy=values["cancellation_policy"],
    )
    return page(
        request,
        "partners/created.html",
        {"active": "Partners", "created": created, "name": values["name"]},
        viewer=viewer,
        title="Partner created",
        status_code=201,
    )


async def _partner_page(
    request: Request,
    viewer: Viewer,
    partner_id: int,
    *,
    status_code: int = 200,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    notice: str = "",
    problem: str = "",
) -> Response:
    svc = services(request)
    now = svc.clock.now()
    async with svc.db.read() as conn:
        row = await partner_row(conn, partner_id)
        if row is None:
            raise PageNotFound(f"There is no partner {partner_id}.")
        (health,) = await health_repository.last_hour(conn, now, [partner_id])
        keys = await partner_key_prefixes(conn, partner_id)
        check = await last_check(conn, partner_id)
        # docs/rules/ride.md#sandbox-and-console: the last 30 days' completed rides with all four milestones
        coverage = await ride_repo.coverage(conn, partner_id, since=now - COVERAGE_WINDOW, until=now)
    until = row.previous_secret_until
    overlap_until = until if until is not None and until > now else None
    policy = _policy_spec(row.cancellation_policy)
    current = {
        "base_url": row.base_url,
        "airports": row.airports,
        "markup": _percent(row.markup_percent),
        "cancellation_policy": policy,
        "follow_flight_minutes": str(row.follow_flight_minutes),
        "free_wait_minutes": str(row.free_wait_minutes),
    }
    return page(
        request,
        "partners/detail.html",
        {
            "active": "Partners",
            "p": row,
            "health": health,
            "typed_markup": current["markup"],
            "keys": keys,
            "policy": policy,
            "overlap_until": overlap_until,
            "errors": errors or {},
            "typed": typed or current,
            "notice": notice,
            "problem": problem,
            "check": check,
            "coverage": coverage,
            "can_manage": viewer.may(Capability.MANAGE_PARTNERS),
        },
        viewer=viewer,
        title=f"Partner {row.name}",
        status_code=status_code,
    )


@router.get("/partners/{partner_id}")
async def partner_page(request: Request, partner_id: str, viewer: Signed) -> Response:
    notice = NOTICES.get(request.query_params.get("done", ""), "")
    return await _partner_page(request, viewer, path_id(partner_id, "partner"), notice=notice)


@router.post("/partners/{partner_id}/edit")
async def edit_partner(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    form = await viewer.form(request)
    number = path_id(partner_id, "partner")
    svc = services(request)
    allow_private = svc.settings.private_partner_urls_allowed
    errors: dict[str, str] = {}
    async with svc.db.read() as conn:
        current = await partner_row(conn, number)
    if current is None:
        raise PageNotFound(f"There is no partner {number}.")
    values = _checked(form, errors, with_name=False)
    # a hosted partner has no server (docs/rules/hosted-partners.md): its empty base URL stays as it is; the
    # built-in sandbox partner's is where this service mounts it (docs/rules/partners.md#partner-urls)
    fixed = current.hosted or current.is_sandbox
    url = current.base_url if fixed else _check_url(allow_private, form, errors)
    typed = {name: _typed(form, name, MAX_URL_CHARS) for name in FIELDS if name != "name"}
    if errors or url is None:
        return await _partner_page(request, viewer, number, status_code=422, errors=errors, typed=typed)
    wanted = editing.PartnerSettings(base_url=url, airports=values["airports"], markup_percent=values["markup"])
    policy: Policy | None = values["cancellation_policy"]
    try:
        changes = await editing.update_settings(
            svc.db, svc.clock, number, wanted, allow_private=allow_private, actor=viewer.actor
        )
        async with svc.db.read() as conn:
            row = await partner_row(conn, number)
        if row is not None and _policy_spec(row.cancellation_policy) != (policy.spec() if policy else ""):
            await service.set_cancellation_policy(svc.db, svc.clock, number, policy, actor=viewer.actor)
            changes["cancellation_policy"] = True
        limits = {name: values[name] for name in FLIGHT_FIELDS if name in values}
        if row is not None and any(getattr(row, name) != value for name, value in limits.items()):
            await service.set_flight_policy(
                svc.db,
                svc.clock,
                number,
                follow_flight_minutes=limits.get("follow_flight_minutes"),
                free_wait_minutes=limits.get("free_wait_minutes"),
                actor=viewer.actor,
            )
            changes["flight_policy"] = True
    except service.PartnerNotFound:
        raise PageNotFound(f"There is no partner {number}.") from None
    return RedirectResponse(f"{PREFIX}/partners/{number}?done={'updated' if changes else 'unchanged'}", status_code=303)


@router.post("/partners/{partner_id}/status")
async def set_partner_status(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    form = await viewer.form(request)
    number = path_id(partner_id, "partner")
    wanted = form.get("status")
    if wanted not in ("enabled", "disabled"):
        return await _partner_page(
            request, viewer, number, status_code=422, problem="Choose Enable or Disable; nothing was changed."
        )
    svc = services(request)
    try:
        await service.set_partner_status(svc.db, svc.clock, number, wanted, actor=viewer.actor)
    except service.PartnerNotFound:
        raise PageNotFound(f"There is no partner {number}.") from None
    return RedirectResponse(f"{PREFIX}/partners/{number}?done={wanted}", status_code=303)


@router.post("/partners/{partner_id}/rotate-secret")
async def rotate_secret(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    await viewer.form(request)
    number = path_id(partner_id, "partner")
    svc = services(request)
    try:
        rotated = await rotation.rotate_signing_secret(
            svc.db,
            svc.clock,
            svc.box,
            number,
            overlap=timedelta(hours=svc.settings.partner_secret_overlap_hours),
            actor=viewer.actor,
        )
    except service.PartnerNotFound:
        raise PageNotFound(f"There is no partner {number}.") from None
    except rotation.RotationRefused as exc:
        return await _partner_page(request, viewer, number, status_code=409, problem=f"{exc}.")
    async with svc.db.read() as conn:
        row = await partner_row(conn, number)
    return page(
        request,
        "partners/secret.html",
        {"active": "Partners", "rotated": rotated, "p": row},
        viewer=viewer,
        title="New signing secret",
    )


@router.post("/partners/{partner_id}/check")
async def check_partner(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    await viewer.form(request)
    number = path_id(partner_id, "partner")
    svc = services(request)
    deadlines = conformance.Deadlines(
        search=svc.settings.partner_timeout_seconds,
        create=svc.settings.partner_create_budget_seconds,
        other=svc.settings.partner_timeout_seconds,
    )
    try:
        report = await editing.check_partner(
            svc.db, svc.clock, svc.box, svc.partner_client, number, actor=viewer.actor, deadlines=deadlines
        )
    except service.PartnerNotFound:
        raise PageNotFound(f"There is no partner {number}.") from None
    except editing.NotCalled as exc:
        return await _partner_page(request, viewer, number, status_code=409, problem=f"{exc}.")
    # Post/Redirect/Get: the table is read back from the run's audit row, so a reload shows it
    # again instead of calling the partner again.
    done = "checked-pass" if report.passed else "checked-fail"
    return RedirectResponse(f"{PREFIX}/partners/{number}?done={done}#h-check", status_code=303)
