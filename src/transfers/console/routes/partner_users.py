"""A partner's portal users in the console (docs/rules/hosted-partners.md: "managed in the console"):
``/console/partners/{id}/users`` lists them; an admin (``MANAGE_PARTNERS``) adds one (``New portal
user``: the password is shown once) or disables / enables one (disabling ends its portal sessions
at once). The same use cases as ``transfers partners users create`` (``hosted/users.py``), audited
with the operator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.console.admin_queries import partner_row
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.forms import text
from transfers.console.render import page
from transfers.hosted import repository as hosted_repo
from transfers.hosted import users
from transfers.operators.models import Capability
from transfers.partners.service import PartnerNotFound
from transfers.webauth.refusals import path_id

router = APIRouter()
NOTICES = {"disabled": "The user is disabled and signed out of the portal.", "enabled": "The user may sign in again."}


async def _users_page(
    request: Request,
    viewer: Viewer,
    partner_id: int,
    *,
    status_code: int = 200,
    created: users.NewPartnerUser | None = None,
    error: str = "",
    email: str = "",
) -> Response:
    async with services(request).db.read() as conn:
        partner = await partner_row(conn, partner_id)
        if partner is None:
            raise PageNotFound(f"There is no partner {partner_id}.")
        people = await hosted_repo.users_of_partner(conn, partner_id)
    context: dict[str, Any] = {
        "active": "Partners",
        "p": partner,
        "people": people,
        "created": created,
        "error": error,
        "email": email,
        "notice": NOTICES.get(request.query_params.get("done", ""), ""),
        "can_manage": viewer.may(Capability.MANAGE_PARTNERS),
    }
    return page(
        request,
        "partners/users.html",
        context,
        viewer=viewer,
        status_code=status_code,
        title=f"Portal users of {partner.name}",
    )


@router.get("/partners/{partner_id}/users")
async def users_page(request: Request, partner_id: str, viewer: Signed) -> Response:
    return await _users_page(request, viewer, path_id(partner_id, "partner"))


@router.post("/partners/{partner_id}/users")
async def create_user(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    form = await viewer.form(request)
    pid = path_id(partner_id, "partner")
    email, problem = text(form.get("email"), limit=320)
    svc = services(request)
    try:
        if problem or not email:
            raise users.UserRefused(problem or "--email: enter the user's email address")
        created = await users.create_partner_user(
            svc.db, svc.clock, partner_id=pid, email=email, password=None, actor=viewer.actor
        )
    except PartnerNotFound:
        raise PageNotFound(f"There is no partner {pid}.") from None
    except users.UserRefused as exc:
        return await _users_page(
            request, viewer, pid, status_code=422, error=str(exc).removeprefix("--email: "), email=email
        )
    return await _users_page(request, viewer, pid, created=created)


@router.post("/partners/{partner_id}/users/{user_id}/status")
async def user_status(request: Request, partner_id: str, user_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_PARTNERS)
    form = await viewer.form(request)
    pid, uid = path_id(partner_id, "partner"), path_id(user_id, "user")
    status = form.get("status")
    if status not in ("active", "disabled"):
        raise PageNotFound("There is no such action.")
    svc = services(request)
    if not await users.set_user_status(
        svc.db, svc.clock, partner_id=pid, user_id=uid, status=str(status), actor=viewer.actor
    ):
        raise PageNotFound("There is no such user for this partner.")
    done = "disabled" if status == "disabled" else "enabled"
    return RedirectResponse(f"{PREFIX}/partners/{pid}/users?done={done}", status_code=303)
