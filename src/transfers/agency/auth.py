"""Who is looking at an agency page (docs/rules/agency-portal.md#users): a signed-in, active agency
user, with its client (the agency) as the API's key lookup would give it.

``Signed`` (a FastAPI dependency) gives a route the ``AgencyViewer`` or ends the request: a page
read goes to the sign-in page, a form post is refused there with nothing done. ``AdminOnly`` also
refuses an agent with the 403 page (``Developers`` and ``Users`` are for admins; the link is not
shown to an agent either, but the server is the wall). Everything a viewer reads or changes is
scoped by ``viewer.client_id``: another agency's booking is a 404 page, the same as one that does
not exist.

The realm ``agency`` has its own cookie (``transfers_agency``, path ``/agency``): a console or
partner portal session never opens these pages, and an agency user's never opens theirs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.datastructures import FormData
from starlette.requests import Request

from transfers.agency import repository as repo
from transfers.agency.users import REALM, AgencyRole
from transfers.clients.models import ClientPrincipal, ClientStatus
from transfers.config import Settings
from transfers.errors import client_suspended
from transfers.services import Services
from transfers.webauth.realm import Realm, area_realm
from transfers.webauth.refusals import NotAllowed, PageNotFound
from transfers.webauth.sessions import Session
from transfers.webauth.viewer import checked_form, realm_of, services, session_dependency

__all__ = [
    "PREFIX",
    "AdminOnly",
    "AgencyViewer",
    "AgentRefused",
    "PageNotFound",
    "Signed",
    "agency_realm",
    "realm_of",
    "services",
]

PREFIX = "/agency"


class AgentRefused(NotAllowed):
    """An agent (not an admin) asked for an admin's page or action: a 403 page, nothing done."""

    def __init__(self, message: str = "Only your agency's admins may open this page.") -> None:
        super().__init__(message)


def agency_realm(settings: Settings) -> Realm:
    return area_realm(
        REALM,
        "transfers_agency",
        PREFIX,
        sandbox=settings.is_sandbox,
        attempts_per_address=settings.signin_attempts_per_minute,
    )


@dataclass(frozen=True, slots=True)
class AgencyViewer:
    user_id: int
    email: str
    role: AgencyRole
    client: ClientPrincipal
    session: Session

    @property
    def client_id(self) -> int:
        return self.client.client_id

    @property
    def is_admin(self) -> bool:
        return self.role is AgencyRole.ADMIN

    @property
    def actor(self) -> str:
        """How the booking story and the audit log name this person."""
        return f"agency_user:{self.user_id} {self.email} (client {self.client_id})"

    async def form(self, request: Request) -> FormData:
        """The posted form, once its CSRF token is checked (CsrfRefused otherwise: a 403 page)."""
        return await checked_form(request, self.session)

    def require_admin(self) -> None:
        if not self.is_admin:
            raise AgentRefused()

    def require_active_client(self) -> None:
        """A suspended agency reads its pages but changes nothing, as its API keys are refused."""
        if self.client.status != ClientStatus.ACTIVE:
            raise client_suspended()


async def _viewer(svc: Services, session: Session) -> AgencyViewer | None:
    """None for a user disabled meanwhile (answered as no session at all)."""
    async with svc.db.read() as conn:
        user = await repo.by_id(conn, session.user_id)
        client = await repo.client_principal(conn, user.client_id) if user else None
    if user is None or client is None or user.status != "active":
        return None
    return AgencyViewer(user.id, user.email, AgencyRole(user.role), client, session)


signed_in = session_dependency(_viewer)
Signed = Annotated[AgencyViewer, Depends(signed_in)]


async def _admin(viewer: Signed) -> AgencyViewer:
    viewer.require_admin()
    return viewer


AdminOnly = Annotated[AgencyViewer, Depends(_admin)]
