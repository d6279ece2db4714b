"""Sign in (``/console/login``) and sign out: ``webauth.login_routes`` in the ``console`` realm,
with operators as its users; each sign-in and sign-out is recorded in the operator's audit trail."""

from __future__ import annotations

from transfers.console.auth import Viewer, signed_in
from transfers.console.render import page
from transfers.operators import service as operators
from transfers.services import Services
from transfers.webauth.login_routes import login_router


async def _signed_in(svc: Services, user_id: int) -> None:
    operator = await operators.active_operator(svc.db, user_id)
    if operator is not None:
        await operators.record_session_event(svc.db, svc.clock, operator, "operator.sign_in")


async def _signed_out(svc: Services, viewer: Viewer) -> None:
    await operators.record_session_event(svc.db, svc.clock, viewer.operator, "operator.sign_out")


router = login_router(
    credentials=operators.credentials, page=page, signed_in=signed_in, on_sign_in=_signed_in, on_sign_out=_signed_out
)
