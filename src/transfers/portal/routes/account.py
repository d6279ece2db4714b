"""``Account``: the partner's company as the service knows it, its portal users and, for a server
partner, its health over the last hour and the rotation of its signing secret (the new secret
shown once; the old one keeps signing beside it for ``TRANSFERS_PARTNER_SECRET_OVERLAP_HOURS``)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.hosted import repository as repo
from transfers.partners import health_repository, rotation
from transfers.portal.auth import Forbidden, PartnerViewer, Signed, services
from transfers.portal.render import page

router = APIRouter()


async def _account(
    request: Request, viewer: PartnerViewer, *, rotated: rotation.RotatedSecret | None = None, status_code: int = 200
) -> Response:
    svc = services(request)
    async with svc.db.read() as conn:
        partner = await repo.partner_record(conn, viewer.partner_id)
        people = await repo.users_of_partner(conn, viewer.partner_id)
        report = [] if viewer.hosted else await health_repository.last_hour(conn, svc.clock.now(), [viewer.partner_id])
    health = report[0] if report else None
    return page(
        request,
        "account.html",
        {"active": "Account", "partner": partner, "people": people, "health": health, "rotated": rotated},
        viewer=viewer,
        status_code=status_code,
        title="Account",
    )


@router.get("/account")
async def account_page(request: Request, viewer: Signed) -> Response:
    return await _account(request, viewer)


@router.post("/account/rotate-secret")
async def rotate_secret(request: Request, viewer: Signed) -> Response:
    await viewer.form(request)
    if viewer.hosted:
        raise Forbidden("Your company has no server: there is no signing secret to rotate.")
    svc = services(request)
    try:
        rotated = await rotation.rotate_signing_secret(
            svc.db,
            svc.clock,
            svc.box,
            viewer.partner_id,
            overlap=timedelta(hours=svc.settings.partner_secret_overlap_hours),
            actor=viewer.actor,
        )
    except rotation.RotationRefused as exc:
        raise Forbidden(str(exc)) from None
    return await _account(request, viewer, rotated=rotated)
