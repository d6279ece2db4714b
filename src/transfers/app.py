"""create_app(): routers, error handlers, plumbing and the lifespan of shared resources."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from transfers import __version__, features, runtime
from transfers.agency.app import build_agency
from transfers.api.direct_routes import DirectApp, install_direct_routes
from transfers.api.docs_page import install_docs
from transfers.api.errors import install_error_handlers
from transfers.api.landing import router as landing_router
from transfers.api.metrics import router as metrics_router
from transfers.api.middleware import Plumbing, RequestPlumbing
from transfers.api.openapi import install_openapi
from transfers.api.ratelimit import RateLimiter
from transfers.api.routes import booking_list, bookings, health, reference, reverse, search, sms_hooks
from transfers.api.routes import incidents as incident_routes
from transfers.api.routes import messages as message_routes
from transfers.api.routes import ratings as rating_routes
from transfers.api.routes import scorecard as scorecard_routes
from transfers.api.routes import statements as statement_routes
from transfers.api.routes import wallet as wallet_routes
from transfers.api.routes import webhooks as webhook_routes
from transfers.clock import Clock
from transfers.config import Settings, get_settings
from transfers.console.app import build_console
from transfers.db.engine import Database
from transfers.logging import configure_logging
from transfers.messages import pages as optout_pages
from transfers.portal.app import build_portal
from transfers.ratings import pages as rating_pages
from transfers.services import Services
from transfers.tracking import pages as ride_pages


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    db: Database | None = None,
    configure_logs: bool = True,
) -> DirectApp:
    settings = settings or get_settings()
    if configure_logs:
        configure_logging(settings.log_level, settings.log_format)
    svc = Services.build(settings, clock=clock, db=db)
    features.register()  # the feature packages' handlers for the bookings' moments (features.py)
    rate_limiter = RateLimiter.from_settings(settings)  # hardening: per-key limits (api/ratelimit.py)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stops = await runtime.start(svc)
        try:
            yield
        finally:
            svc.shutting_down = True
            for stop in reversed(stops):
                await stop()
            await svc.partner_client.aclose()
            if rate_limiter is not None:
                await rate_limiter.aclose()
            if db is None:
                await svc.db.dispose()

    app = DirectApp(
        title="Transfers booking API",
        version=__version__,
        description="Airport ground-transfer booking API. Booking-API paths live under "
        "`/api/v1`; authenticate with `Authorization: Bearer <API_KEY>`.",
        lifespan=lifespan,
        docs_url=None,  # served by api/docs_page.py from the package, not from a CDN
        redoc_url=None,
    )
    app.state.services = svc
    app.state.rate_limiter = rate_limiter
    install_error_handlers(app)
    # The router tries routes in order and no two paths overlap: the busiest come first (route
    # matching was ~6 % of a GET booking when it sat behind the reference routes).
    app.include_router(bookings.router)
    app.include_router(search.router)
    app.include_router(health.router)
    app.include_router(metrics_router)  # hardening: GET /metrics (api/metrics.py)
    app.include_router(reference.public)
    app.include_router(reference.booking_api)
    app.include_router(booking_list.router)
    app.include_router(reverse.router)
    app.include_router(statement_routes.router)  # docs/rules/statements.md#partner-api
    app.include_router(scorecard_routes.router)  # docs/rules/quality.md#reverse-api
    install_docs(app)  # /docs works offline (api/docs_page.py)
    app.include_router(landing_router)  # GET / links the docs, the console and the portal
    app.include_router(wallet_routes.router)  # docs/rules/wallet.md
    app.include_router(webhook_routes.router)  # docs/rules/webhooks.md
    app.include_router(incident_routes.router)  # docs/rules/incidents.md
    app.include_router(rating_routes.router)  # docs/rules/ratings.md#api
    app.include_router(ride_pages.router)  # /t/{token} and /d/{token} (docs/rules/ride.md#tracking-page)
    app.include_router(rating_pages.router)  # /r/{token} (docs/rules/ratings.md#rating-page)
    app.include_router(message_routes.router)  # docs/rules/messages.md#seen
    app.include_router(optout_pages.router)  # /m/{token} (docs/rules/messages.md#opt-out)
    app.include_router(sms_hooks.router)  # the SMS provider's callbacks (docs/rules/messages.md#opt-out)
    webhook_routes.document_events(app)  # the events clients receive, in the document's "webhooks"
    if settings.sandbox_partner_enabled:
        runtime.mount_sandbox_partner(app, svc)
    app.mount("/console", build_console(svc))  # the operator console (console/app.py)
    app.mount("/partner", build_portal(svc))  # the partner portal (portal/app.py)
    app.mount("/agency", build_agency(svc))  # the agency portal (agency/app.py)
    # Outermost inside FastAPI: request id, body limit, error envelope, RateLimit-* headers, metrics, access log.
    app.add_middleware(RequestPlumbing, max_body_bytes=settings.max_body_bytes, request_log=svc.request_log)
    # Before all of FastAPI's layers: POST search, GET booking and POST booking, through the same plumbing
    # (api/direct_routes.py).
    install_direct_routes(
        app,
        [
            (search.router, "POST", search.PATH),
            (bookings.router, "GET", bookings.BOOKING_PATH),
            (bookings.router, "POST", bookings.BOOKING_PATH),
        ],
        Plumbing(max_body_bytes=settings.max_body_bytes, request_log=svc.request_log),
    )
    install_openapi(app)
    return app


def create_served_app() -> DirectApp:
    """The app as ``transfers serve`` runs it (uvicorn's factory): ``create_app()`` handling the
    forwarded headers of a trusted proxy itself, for the requests it passes on to FastAPI (uvicorn's
    ``proxy_headers`` is off: ``api/direct_routes.py``). The trusted addresses are uvicorn's own:
    ``FORWARDED_ALLOW_IPS``, else ``127.0.0.1,::1``."""
    app = create_app()
    app.trust_forwarded(forwarded_allow_ips())
    return app


def forwarded_allow_ips() -> str:
    """The proxies whose forwarded headers are believed, read as uvicorn reads them (its ``Config``)."""
    return os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
