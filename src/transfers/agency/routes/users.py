"""``Users`` (admins only, docs/rules/agency-portal.md#users): the agency's people, add one (the
password shown once), disable or enable one (a disabled user's sessions end at once). Through
``agency/users.py``, the use cases ``transfers clients users create`` runs, audited with this admin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.agency import forms, users
from transfers.agency.auth import AdminOnly, AgencyViewer, services
from transfers.agency.render import page
from transfers.webauth.refusals import NotAllowed, path_id

router = APIRouter()


async def _users_page(
    request: Request,
    viewer: AgencyViewer,
    *,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    created: users.CreatedAgencyUser | None = None,
    notice: str = "",
    status_code: int = 200,
) -> Response:
    people = await users.list_users(services(request).db, viewer.client_id)
    context: dict[str, Any] = {
        "active": "Users",
        "people": people,
        "errors": errors or {},
        "typed": typed or {},
        "created": created,
        "notice": notice,
    }
    return page(request, "users.html", context, viewer=viewer, status_code=status_code, title="Users")


@router.get("/users")
async def users_page(request: Request, viewer: AdminOnly) -> Response:
    notice = {"disabled": "The user is disabled and signed out.", "active": "The user can sign in again."}.get(
        request.query_params.get("done", ""), ""
    )
    return await _users_page(request, viewer, notice=notice)


@router.post("/users")
async def add_user(request: Request, viewer: AdminOnly) -> Response:
    form = await viewer.form(request)
    typed = {"email": forms.text(form, "email", 320), "role": forms.text(form, "role", 16)}
    svc = services(request)
    try:
        created = await users.create_user(
            svc.db,
            svc.clock,
            client_id=viewer.client_id,
            email=forms.text(form, "email", 10_000),
            role=typed["role"],
            password=None,
            actor=viewer.actor,
        )
    except users.AgencyUserRefused as exc:
        field = "role" if "role" in exc.message else "email"
        return await _users_page(request, viewer, errors={field: exc.message}, typed=typed, status_code=422)
    return await _users_page(request, viewer, created=created, status_code=201)


@router.post("/users/{user_id}/status")
async def set_status(request: Request, user_id: str, viewer: AdminOnly) -> Response:
    form = await viewer.form(request)
    target = path_id(user_id, "user")
    status = forms.text(form, "status", 16)
    if target == viewer.user_id:
        raise NotAllowed("You cannot change your own account here: ask another admin of your agency.")
    svc = services(request)
    await users.set_user_status(
        svc.db, svc.clock, client_id=viewer.client_id, user_id=target, status=status, actor=viewer.actor
    )
    return RedirectResponse(f"/agency/users?done={status}", status_code=303)
