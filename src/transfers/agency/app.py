"""The agency portal as its own ASGI application, mounted by ``transfers.app`` under ``/agency``:
like the console and the partner portal, ``webauth.site.build_area`` (HTML error pages, out of the
OpenAPI document, ``SecurityHeaders`` on every answer).

``ROUTERS`` is the list of sections: a new section appends its module here (``agency/__init__.py``)."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from transfers.agency.auth import agency_realm
from transfers.agency.render import page
from transfers.agency.routes import (
    book,
    book_passenger,
    booking_page,
    booking_problem,
    bookings,
    developer_webhooks,
    developers,
    home,
    login,
    post_only,
    traveller_messages,
    users,
    wallet,
)
from transfers.services import Services
from transfers.webauth.site import build_area

ROUTERS: tuple[APIRouter, ...] = (
    login.router,
    home.router,
    book.router,
    book_passenger.router,
    bookings.router,
    booking_page.router,
    booking_problem.router,
    wallet.router,
    users.router,
    developers.router,  # Developers: keys and the request log
    developer_webhooks.router,  # Developers: webhook endpoints, events, Resend
    traveller_messages.router,  # Messages: the settings of the messages to travellers
    post_only.router,  # last: a GET of a form's action leads back to its page
)


def build_agency(svc: Services) -> FastAPI:
    return build_area(svc, agency_realm(svc.settings), package="transfers.agency", routers=ROUTERS, page=page)
