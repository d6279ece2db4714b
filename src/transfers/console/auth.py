"""Who is looking at a console page, and what they may do (docs/rules/console.md).

``Signed`` (a FastAPI dependency) gives a route the signed-in ``Viewer`` or ends the request: a page
read goes to the sign-in page, a form post is refused there with nothing done. ``viewer.require``
answers 403 for a capability the operator's role lacks; ``await viewer.form(request)`` reads a
posted form and refuses it (403) unless its CSRF token is the session's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.datastructures import FormData
from starlette.requests import Request

from transfers.config import Settings
from transfers.operators import service as operators
from transfers.operators.models import Capability, Operator
from transfers.services import Services
from transfers.webauth.realm import Realm, area_realm
from transfers.webauth.refusals import NotAllowed, PageNotFound
from transfers.webauth.sessions import Session
from transfers.webauth.viewer import checked_form, realm_of, services, session_dependency

__all__ = ["PREFIX", "Forbidden", "PageNotFound", "Signed", "Viewer", "console_realm", "realm_of", "services"]

PREFIX = "/console"


class Forbidden(NotAllowed):
    """The operator's role does not allow this (a 403 page; nothing done)."""

    def __init__(self, message: str = "Your role does not allow this.") -> None:
        super().__init__(message)


def console_realm(settings: Settings) -> Realm:
    return area_realm(
        operators.REALM,
        "transfers_console",
        PREFIX,
        sandbox=settings.is_sandbox,
        attempts_per_address=settings.signin_attempts_per_minute,
    )


@dataclass(frozen=True, slots=True)
class Viewer:
    operator: Operator
    session: Session

    def may(self, capability: Capability) -> bool:
        return self.operator.may(capability)

    def require(self, capability: Capability) -> None:
        if not self.may(capability):
            raise Forbidden(f"Your role ({self.operator.role.value}) does not allow this.")

    async def form(self, request: Request) -> FormData:
        """The posted form, once its CSRF token is checked (CsrfRefused otherwise: a 403 page)."""
        return await checked_form(request, self.session)

    @property
    def actor(self) -> str:
        return self.operator.actor


async def _viewer(svc: Services, session: Session) -> Viewer | None:
    """None for an operator disabled meanwhile (its sessions are gone already: the race's end)."""
    operator = await operators.active_operator(svc.db, session.user_id)
    return Viewer(operator, session) if operator is not None else None


signed_in = session_dependency(_viewer)
Signed = Annotated[Viewer, Depends(signed_in)]
