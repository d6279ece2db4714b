"""Settings: the only reader of ``TRANSFERS_*`` environment variables.

Every number DECISIONS.md calls a "product default" is a field here, so a deployment can change it
without touching code. Settings are read once (``get_settings``) and passed down; nothing else reads
the environment.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SQLITE_PATH = Path("var") / "transfers.sqlite3"


class Settings(BaseSettings):
    """Deployment configuration. Field docs are mirrored in README.md ("Settings")."""

    model_config = SettingsConfigDict(env_prefix="TRANSFERS_", env_file=".env", extra="ignore")

    environment: Literal["sandbox", "live"] = "sandbox"
    database_url: str = Field(default="", description="empty: SQLite file under ./var/")
    database_pool_size: int = 10
    database_pool_timeout_seconds: float = 5.0
    redis_url: str = ""
    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "json"
    # Key that encrypts partner outbound tokens and signing secrets at rest. Required in live;
    # in sandbox a key is generated once and kept in var/secret.key.
    secret_key: str = ""

    sandbox_partner: bool | None = None  # None: on in sandbox, off in live
    sandbox_approve_after_seconds: float = 10.0
    allow_private_partner_urls: bool | None = None  # None: allowed in sandbox, refused in live
    public_base_url: str = ""  # how partners reach this service; default derived from --host/--port
    embedded_worker: bool = True  # `serve` runs the outbox/jobs worker in-process (off: --no-worker)

    partner_timeout_seconds: float = 3.0
    partner_create_budget_seconds: float = 2.0
    partner_max_response_bytes: int = 1_048_576
    partner_max_vehicles: int = 200

    search_ttl_seconds: int = 1800
    min_lead_time_seconds: int = 7200
    max_days_ahead: int = 365
    max_travelers: int = 50

    max_body_bytes: int = 65_536
    rate_limit_per_minute: int = 600
    rate_limit_burst: int = 100
    # Hardening: the shared (Redis) rate-limit buckets, used when redis_url is set (README "Rate limits").
    rate_limit_redis_prefix: str = "transfers:ratelimit:"
    rate_limit_redis_timeout_seconds: float = 0.5
    auth_cache_seconds: float = 1.0
    # Searches see partner and vehicle-type changes within this bound (partners/directory.py).
    partner_cache_seconds: float = 1.0

    idempotency_ttl_seconds: int = 86_400
    idempotency_lock_seconds: int = 60

    outbox_poll_seconds: float = 1.0
    outbox_lease_seconds: int = 60
    delivery_deadline_hours: float = 24.0
    delivery_deadline_before_pickup_hours: float = 1.0
    reconcile_after_seconds: int = 1800
    complete_after_pickup_hours: float = 12.0
    jobs_interval_seconds: float = 30.0

    default_currency: str = "EUR"
    default_markup_percent: Decimal = Decimal("0")

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy async URL, with the embedded SQLite default and async drivers filled in."""
        url = self.database_url or f"sqlite:///{DEFAULT_SQLITE_PATH}"
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+asyncpg://" + url.split("://", 1)[1]
        elif url.startswith("sqlite:///"):
            url = "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
        return url

    @property
    def service_url(self) -> str:
        """How partners reach this service (``serve`` fills public_base_url from --host/--port)."""
        return (self.public_base_url or "http://127.0.0.1:8000").rstrip("/")

    @property
    def is_sandbox(self) -> bool:
        return self.environment == "sandbox"

    @property
    def sandbox_partner_enabled(self) -> bool:
        """The built-in partner (and its scenario triggers) exists only in sandbox deployments."""
        if not self.is_sandbox:
            return False
        return True if self.sandbox_partner is None else self.sandbox_partner

    @property
    def private_partner_urls_allowed(self) -> bool:
        if self.allow_private_partner_urls is None:
            return self.is_sandbox
        return self.allow_private_partner_urls


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
