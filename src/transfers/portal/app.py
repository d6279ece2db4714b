"""The portal as its own ASGI application, mounted by ``transfers.app`` under ``/partner``: like
the console, ``webauth.site.build_area`` (HTML error pages, out of the OpenAPI document,
``SecurityHeaders`` on every answer)."""

from __future__ import annotations

from fastapi import FastAPI

from transfers.portal.auth import partner_realm
from transfers.portal.render import page
from transfers.portal.routes import (
    account,
    bookings,
    login,
    quality,
    rate_card,
    rate_card_preview,
    ride,
    statements,
)
from transfers.services import Services
from transfers.webauth.site import build_area


def build_portal(svc: Services) -> FastAPI:
    return build_area(
        svc,
        partner_realm(svc.settings),
        package="transfers.portal",
        routers=[
            module.router
            for module in (login, bookings, ride, rate_card, rate_card_preview, account, statements, quality)
        ],
        page=page,
    )
