"""The console as its own ASGI application, mounted by ``transfers.app`` under ``/console``:
``webauth.site.build_area`` (HTML error pages, out of the OpenAPI document, ``SecurityHeaders``:
a strict CSP with ``frame-ancestors 'none'``, no caching) with the console's routes, and an HTML
page for an unexpected error too (503 while the database is unreachable)."""

from __future__ import annotations

from fastapi import FastAPI

from transfers.console.auth import console_realm
from transfers.console.render import page
from transfers.console.routes import (
    audit,
    bookings,
    clients,
    dashboard,
    deliveries,
    fx,
    incidents,
    login,
    messages,
    operators,
    partner_users,
    partners,
    quality,
    statements,
)
from transfers.services import Services
from transfers.webauth.site import build_area


def build_console(svc: Services) -> FastAPI:
    modules = (
        login,
        dashboard,
        bookings,
        incidents,
        audit,
        clients,
        partners,
        quality,
        deliveries,
        messages,
        fx,
        partner_users,
        operators,
        statements,
    )
    return build_area(
        svc,
        console_realm(svc.settings),
        package="transfers.console",
        routers=[module.router for module in modules],
        page=page,
        html_500=True,
    )
