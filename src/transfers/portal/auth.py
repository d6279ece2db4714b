"""Who is looking at a portal page (docs/rules/hosted-partners.md): a signed-in partner user of an enabled partner.

``Signed`` (a FastAPI dependency) gives a route the ``PartnerViewer`` or ends the request: a page
read goes to the sign-in page, a form post is refused there with nothing done. Everything a viewer
reads or changes is scoped by ``viewer.partner_id``: another partner's booking is a 404 page, the
same as one that does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.requests import Request

from transfers.clients import repository as clients_repo
from transfers.config import Settings
from transfers.hosted import repository as repo
from transfers.hosted.users import REALM
from transfers.services import Services
from transfers.webauth.realm import Realm, area_realm
from transfers.webauth.refusals import NotAllowed, PageNotFound
from transfers.webauth.sessions import Session
from transfers.webauth.viewer import checked_form, realm_of, services, session_dependency

__all__ = ["PREFIX", "Forbidden", "PageNotFound", "PartnerViewer", "Signed", "partner_realm", "realm_of", "services"]

PREFIX = "/partner"


Forbidden = NotAllowed  # e.g. a server partner's booking, read-only here: a 403 page, nothing done


def partner_realm(settings: Settings) -> Realm:
    return area_realm(
        REALM,
        "transfers_partner",
        PREFIX,
        sandbox=settings.is_sandbox,
        attempts_per_address=settings.signin_attempts_per_minute,
    )


@dataclass(frozen=True, slots=True)
class PartnerViewer:
    user_id: int
    email: str
    partner_id: int
    partner_name: str
    hosted: bool
    session: Session

    @property
    def actor(self) -> str:
        """How the booking story and the audit log name this person."""
        return f"partner_user:{self.user_id} {self.email} (partner {self.partner_id})"

    async def audit(
        self, conn: AsyncConnection, action: str, reservation_no: str, now: datetime, **details: Any
    ) -> None:
        await clients_repo.record_admin_action(
            conn,
            actor=self.actor,
            action=f"portal.{action}",
            subject=f"booking:{reservation_no}",
            details={"partner_id": self.partner_id, **{k: v for k, v in details.items() if v is not None}},
            now=now,
        )

    async def form(self, request: Request) -> FormData:
        """The posted form, once its CSRF token is checked (CsrfRefused otherwise: a 403 page)."""
        return await checked_form(request, self.session)

    def require_hosted(self) -> None:
        if not self.hosted:
            raise Forbidden("Your company's bookings come from its own server: they are read-only here.")


async def _viewer(svc: Services, session: Session) -> PartnerViewer | None:
    """None for a user or partner disabled meanwhile (answered as no session at all)."""
    async with svc.db.read() as conn:
        user = await repo.partner_user(conn, session.user_id)
        partner = await repo.partner_record(conn, user.partner_id) if user else None
    if user is None or partner is None or user.status != "active" or partner.status != "enabled":
        return None
    return PartnerViewer(user.id, user.email, partner.id, partner.name, partner.hosted, session)


signed_in = session_dependency(_viewer)
Signed = Annotated[PartnerViewer, Depends(signed_in)]
