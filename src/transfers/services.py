"""The service's long-lived collaborators, built once per process and shared by routes and jobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from transfers import public_urls
from transfers.auth.service import Authenticator
from transfers.background import Background
from transfers.clock import Clock, SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.fx.service import RateTables
from transfers.geo import BuiltinGeocoder, Geocoder, from_settings
from transfers.partners.client import PartnerClient
from transfers.partners.directory import PartnerDirectory
from transfers.partners.health import HealthBuffer
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.ssrf import Resolver, system_resolver
from transfers.requestlog.buffer import RequestLogBuffer

if TYPE_CHECKING:  # the engine is built from this module (deliveries.py); no HTTP import at run time
    from starlette.applications import Starlette

    from transfers.delivery.engine import Engine
    from transfers.delivery.models import OutboxMessage


@dataclass
class Services:
    """Every collaborator is a typed field; the last three are set by ``runtime`` / ``app`` during the
    process's life (None / False until then)."""

    settings: Settings
    db: Database
    clock: Clock
    auth: Authenticator
    box: SecretBox
    partner_client: PartnerClient
    partners: PartnerDirectory
    dispatcher: Engine[OutboxMessage] | None = None
    """Set by ``runtime.start``: create-booking's own delivery attempt uses it (None: no attempt)."""
    sandbox_partner_app: Starlette | None = None
    """The reference partner mounted at /sandbox-partner (sandbox only), registered at start-up."""
    shutting_down: bool = False
    """Set when the lifespan ends: /readyz answers 503 from then on."""
    health: HealthBuffer = field(default_factory=HealthBuffer)
    """Search calls per partner and minute not yet flushed to the database (partners/health.py)."""
    geocoder: Geocoder = field(default_factory=BuiltinGeocoder)
    """Typed places -> coordinates (``geo/``; ``build`` picks the one ``TRANSFERS_GEOCODER`` names)."""
    webhook_resolver: Resolver = system_resolver
    """How clients' webhook hosts are resolved, at creation and before every send, for the SSRF guard
    (``webhooks/guard.py``): the system's resolver; tests put their own names here (no real DNS)."""
    request_log: RequestLogBuffer | None = None
    """Client API requests not yet written to the request log (``requestlog/``); None: not kept."""
    background: Background = field(default_factory=Background)
    """Work a request starts without waiting for it (``background.py``: a new booking's first flight check)."""
    wallet_currencies: dict[int, frozenset[str]] = field(default_factory=dict)
    """Per client, the currencies it was last seen holding a wallet in (a search in a currency other than
    its default wallet's checks here first, ``search/service.py``): wallets are never removed, so a
    currency found here stays true; one not found is read again."""
    fx_rates: RateTables | None = None
    """The exchange rates searches convert with, read at most every few seconds (``fx.service.RateTables``);
    set by ``build`` (None: each search that converts reads them)."""

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        db: Database | None = None,
        application_name: str = "transfers-api",
    ) -> Services:
        database = db or Database(
            settings.resolved_database_url,
            pool_size=settings.database_pool_size,
            pool_timeout=settings.database_pool_timeout_seconds,
            application_name=application_name,
        )
        secret_key = resolve_secret_key(settings)
        box = SecretBox(secret_key)
        public_urls.configure(settings.service_url)  # the booking's absolute links (public_urls.py)
        public_urls.configure_link_key(secret_key)  # the rating links' signatures (bookings/rating_link.py)
        clock = clock or SystemClock()
        return cls(
            settings=settings,
            db=database,
            clock=clock,
            auth=Authenticator(database, settings.auth_cache_seconds),
            box=box,
            partners=PartnerDirectory(database, box, settings.partner_cache_seconds),
            partner_client=PartnerClient(
                max_response_bytes=settings.partner_max_response_bytes,
                allow_private=settings.private_partner_urls_allowed,
                trusted_url=settings.sandbox_partner_url,
            ),  # SSRF guard; the built-in sandbox partner trusted by its URL
            geocoder=from_settings(settings),
            request_log=RequestLogBuffer(clock, capacity=settings.request_log_buffer) if settings.request_log else None,
            fx_rates=RateTables(database, settings, clock),
        )
