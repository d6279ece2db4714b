"""Settings: the only reader of ``TRANSFERS_*`` environment variables.

Every number docs/rules/ calls a default is a field here, so a deployment can change it
without touching code. Settings are read once (``get_settings``) and passed down; nothing else reads
the environment.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SQLITE_PATH = Path("var") / "transfers.sqlite3"
ENV_PREFIX = "TRANSFERS_"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DATABASE_SCHEMES = ("postgresql://", "postgres://", "postgresql+asyncpg://", "sqlite:///", "sqlite+aiosqlite:///")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
SANDBOX_APPROVAL_POLL_SECONDS = 2
SANDBOX_PARTNER_PATH = "/sandbox-partner"  # where the service mounts the built-in partner (runtime.py)
LIVE_APPROVAL_POLL_SECONDS = 600
# TRANSFERS_* variables read outside Settings on purpose: fault injection for the process tests
# (failpoints.py) and the test suite's own switches. Known, so never reported as misspelled.
OTHER_VARIABLES = frozenset({"TRANSFERS_FAILPOINTS", "TRANSFERS_TEST_DATABASE_URL", "TRANSFERS_UPDATE_SCREENSHOTS"})
# Fields whose value is never printed, not even when it is invalid (URLs are printed with the password masked).
SECRET_FIELDS = frozenset({"secret_key", "flight_provider_key", "metrics_token", "twilio_auth_token"})
TWILIO_API_URL = "https://api.twilio.com"  # Twilio's REST API base (its Messages API lives under /2010-04-01)
SMS_SENDER_PATTERN = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9 ]{3,11}$")  # an alphanumeric sender ID, as a client's
E164_PATTERN = re.compile(r"^\+[1-9][0-9]{6,14}$")
TWILIO_ACCOUNT_SID_PATTERN = re.compile(r"^AC[0-9a-fA-F]{32}$")


class Settings(BaseSettings):
    """Deployment configuration. Field docs are mirrored in docs/operations/settings.md."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", extra="ignore")

    environment: Literal["sandbox", "live"] = "sandbox"
    database_url: str = Field(default="", description="empty: SQLite file under ./var/")
    database_pool_size: int = Field(default=10, ge=1)
    database_pool_timeout_seconds: float = Field(default=5.0, gt=0)
    redis_url: str = ""
    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "json"
    # Key that encrypts partner outbound tokens and signing secrets at rest. Required in live;
    # in sandbox a key is generated once and kept in var/secret.key.
    secret_key: str = ""

    sandbox_partner: bool | None = None  # None: on in sandbox, off in live
    sandbox_approve_after_seconds: float = Field(default=10.0, ge=0)
    # The SSRF guard (docs/rules/partners.md#partner-urls, docs/rules/webhooks.md#private-addresses) is on
    # in every environment; these lift it (operators' partner URLs; clients' webhook URLs) and live refuses
    # both. The built-in sandbox partner needs neither: it is trusted by its own URL (sandbox_partner_url).
    allow_private_partner_urls: bool = False
    allow_private_webhook_urls: bool = False
    # docs/operations/security.md: GET /metrics answers only `Authorization: Bearer <this>`; empty: served
    # openly in sandbox, refused (404) in live.
    metrics_token: str = ""
    # docs/operations/security.md#sign-in: sign-in attempts a minute per client address, every signed-in
    # area together; more are refused (429) before any password is hashed.
    signin_attempts_per_minute: int = Field(default=10, ge=1)
    public_base_url: str = ""  # how partners reach this service; default derived from --host/--port
    embedded_worker: bool = True  # `serve` runs the outbox/jobs worker in-process (off: --no-worker)

    partner_timeout_seconds: float = Field(default=3.0, gt=0)
    partner_create_budget_seconds: float = Field(default=2.0, gt=0)
    partner_max_response_bytes: int = Field(default=1_048_576, ge=1)
    partner_max_vehicles: int = Field(default=200, ge=1)

    # GET booking answers `Retry-After: N` while the booking waits for its partner, so a
    # polling client (the SDK's wait_until_approved) asks again when it is worth it. None: a few
    # seconds in sandbox (the built-in partner approves in TRANSFERS_SANDBOX_APPROVE_AFTER_SECONDS),
    # 600 in live (docs/rules/states.md#polling: every 10 minutes).
    approval_poll_seconds: int | None = Field(default=None, ge=1, le=3600)

    search_ttl_seconds: int = Field(default=1800, ge=1)
    min_lead_time_seconds: int = Field(default=7200, ge=0)
    max_days_ahead: int = Field(default=365, ge=1)
    max_travelers: int = Field(default=50, ge=1)

    max_body_bytes: int = Field(default=65_536, ge=1)
    rate_limit_per_minute: int = Field(default=600, ge=0)
    rate_limit_burst: int = Field(default=100, ge=0)
    # Hardening: the shared (Redis) rate-limit buckets, used when redis_url is set (docs/integrators/rate-limits.md).
    rate_limit_redis_prefix: str = "transfers:ratelimit:"
    rate_limit_redis_timeout_seconds: float = Field(default=0.5, gt=0)
    auth_cache_seconds: float = Field(default=1.0, ge=0)
    # Searches see partner and vehicle-type changes within this bound (partners/directory.py).
    partner_cache_seconds: float = Field(default=1.0, ge=0)

    idempotency_ttl_seconds: int = Field(default=86_400, ge=1)
    idempotency_lock_seconds: int = Field(default=60, ge=1)

    outbox_poll_seconds: float = Field(default=1.0, gt=0)
    outbox_lease_seconds: int = Field(default=60, ge=1)
    delivery_deadline_hours: float = Field(default=24.0, gt=0)
    delivery_deadline_before_pickup_hours: float = Field(default=1.0, ge=0)
    reconcile_after_seconds: int = Field(default=1800, ge=0)
    complete_after_pickup_hours: float = Field(default=12.0, ge=0)
    jobs_interval_seconds: float = Field(default=30.0, gt=0)

    default_currency: str = "EUR"
    # docs/rules/fx.md: the currencies amounts may be in (comma-separated ISO 4217 codes; empty: every
    # active one), where rates come from, where the ECB file is fetched and how old a rate may be.
    currencies: str = ""
    fx_provider: Literal["sandbox", "ecb"] | None = None  # None: sandbox in sandbox, ecb in live
    fx_ecb_url: str = ""  # the ECB daily reference-rate XML file's own address; empty: nothing is fetched
    fx_fetch_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    fx_max_age_days: int = Field(default=4, ge=0, le=3650)
    fx_cache_seconds: float = Field(default=5.0, ge=0, le=3600)  # a search's rates are at most this old
    default_markup_percent: Decimal = Field(default=Decimal("0"), ge=0, le=100)
    # docs/rules/hosted-partners.md: hosted partners' bookings not accepted within this many hours of their
    # creation, or by this many hours before pickup, are declined and refunded; their e-mails.
    hosted_accept_hours: float = Field(default=4.0, gt=0)
    hosted_accept_before_pickup_hours: float = Field(default=2.0, ge=0)
    smtp_url: str = ""  # smtp://user:password@host:25 (smtps:// for TLS); empty: e-mails are logged, not sent
    smtp_from: str = "transfers@localhost"
    smtp_timeout_seconds: float = Field(default=10.0, gt=0)

    # Partner health per minute (partners/health.py) and signing-secret rotation.
    partner_health_flush_seconds: float = Field(default=5.0, gt=0, le=300)
    partner_health_retention_days: int = Field(default=30, ge=1, le=3650)
    partner_secret_overlap_hours: float = Field(default=24.0, ge=0, le=720)
    # docs/rules/webhooks.md: webhooks to clients
    webhook_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    webhook_concurrency: int = Field(default=256, ge=1, le=5000)
    webhook_per_endpoint: int = Field(default=16, ge=1, le=500)
    webhook_retention_days: int = Field(default=30, ge=1, le=3650)
    # docs/rules/agency-portal.md#request-log: the client requests' log (requestlog/), written in
    # batches from a bounded in-process buffer; off: nothing recorded (the bench compares both).
    request_log: bool = True
    request_log_buffer: int = Field(default=10_000, ge=1, le=1_000_000)
    request_log_flush_seconds: float = Field(default=1.0, gt=0, le=60)
    # docs/rules/agency-portal.md#geocoder: where typed places come from (transfers/geo/): the
    # offline gazetteer, or a Nominatim-compatible search API at geocoder_url.
    geocoder: Literal["builtin", "nominatim"] = "builtin"
    geocoder_url: str = Field(default="", validate_default=True)
    geocoder_timeout_seconds: float = Field(default=3.0, gt=0, le=30)
    # docs/rules/flights.md#provider: where flight status comes from (transfers/flights/). None: the
    # sandbox provider in sandbox, none in live.
    flight_provider: Literal["sandbox", "none", "aerodatabox"] | None = None
    flight_provider_url: str = ""
    flight_provider_key: str = ""
    flight_provider_timeout_seconds: float = Field(default=10.0, gt=0, le=60)
    flight_provider_max_calls_per_minute: int = Field(default=60, ge=1, le=100_000)
    # docs/rules/flights.md#watching: a new booking's first check starts beside the create's answer (off:
    # at the worker's next scheduled pass, as the tests that drive the passes themselves want it)
    flight_check_at_creation: bool = True
    # docs/rules/messages.md#sending: how SMS to travellers go. None: sandbox in sandbox (kept on the
    # message row, shown in the console), none in live (logged, not sent); live refuses sandbox.
    sms_provider: Literal["none", "sandbox", "twilio"] | None = None
    sms_provider_url: str = Field(default=TWILIO_API_URL, validate_default=True)
    twilio_account_sid: str = Field(default="", validate_default=True)
    twilio_auth_token: str = Field(default="", validate_default=True)
    sms_long_code: str = Field(default="", validate_default=True)  # E.164; US and Canadian numbers are texted from it
    sms_sender: str = "Transfers"  # the alphanumeric sender of a client without its own sms_sender
    sms_timeout_seconds: float = Field(default=10.0, gt=0, le=60)

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"expected one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        if value and not value.startswith(DATABASE_SCHEMES):
            raise ValueError("expected postgresql://user:password@host:5432/dbname or sqlite:///path/to/file")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if value and not value.startswith(REDIS_SCHEMES):
            raise ValueError("expected empty (no Redis) or redis://host:6379/0 (rediss:// for TLS)")
        return value

    @field_validator("smtp_url")
    @classmethod
    def _smtp_url(cls, value: str) -> str:
        if value and not value.startswith(("smtp://", "smtps://")):
            raise ValueError(
                "expected empty (e-mails logged, not sent) or smtp://user:password@host:25 (smtps:// for TLS)"
            )
        return value

    @field_validator("public_base_url")
    @classmethod
    def _public_base_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("expected empty or an http(s) URL such as https://transfers.example.com")
        return value

    @field_validator("geocoder_url")
    @classmethod
    def _geocoder_url(cls, value: str, info: ValidationInfo) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(
                "expected empty or the http(s) base URL of a Nominatim search API, like http://127.0.0.1:8080"
            )
        if not value and info.data.get("geocoder") == "nominatim":
            raise ValueError(f"{ENV_PREFIX}GEOCODER=nominatim needs the Nominatim server's base URL here")
        return value

    @field_validator("default_currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        if not (len(value) == 3 and value.isascii() and value.isalpha() and value.isupper()):
            raise ValueError("expected a three-letter ISO 4217 code in capitals, such as EUR")
        return value

    @field_validator("currencies")
    @classmethod
    def _currencies(cls, value: str) -> str:
        from transfers import money

        codes = [code.strip() for code in value.split(",") if code.strip()]
        wrong = [code for code in codes if not money.is_currency(code)]
        if wrong:
            raise ValueError(
                f"{', '.join(wrong[:5])}: not ISO 4217 currency codes in capitals; expected a list such as EUR,GBP,JPY"
            )
        return ",".join(codes)

    @field_validator("fx_ecb_url")
    @classmethod
    def _ecb_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("expected empty or the http(s) address of the ECB daily reference-rate XML file")
        return value

    @field_validator("sms_provider_url")
    @classmethod
    def _sms_provider_url(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected the http(s) base URL of Twilio's API, like {TWILIO_API_URL}")
        if not value and info.data.get("sms_provider") == "twilio":
            raise ValueError(f"{ENV_PREFIX}SMS_PROVIDER=twilio needs Twilio's API base URL here ({TWILIO_API_URL})")
        return value

    @field_validator("twilio_account_sid")
    @classmethod
    def _twilio_account_sid(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if value and not TWILIO_ACCOUNT_SID_PATTERN.match(value):
            raise ValueError("expected the Twilio account's SID: AC followed by 32 hexadecimal digits")
        if not value and info.data.get("sms_provider") == "twilio":
            raise ValueError(f"{ENV_PREFIX}SMS_PROVIDER=twilio needs the Twilio account's SID (AC...) here")
        return value

    @field_validator("twilio_auth_token")
    @classmethod
    def _twilio_auth_token(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if not value and info.data.get("sms_provider") == "twilio":
            raise ValueError(
                f"{ENV_PREFIX}SMS_PROVIDER=twilio needs the Twilio account's auth token here "
                "(it signs in to Twilio and checks the signature of Twilio's callbacks)"
            )
        return value

    @field_validator("sms_long_code")
    @classmethod
    def _sms_long_code(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if value and not E164_PATTERN.match(value):
            raise ValueError("expected a phone number in E.164 form, like +15017122661")
        if not value and info.data.get("sms_provider") == "twilio":
            raise ValueError(
                f"{ENV_PREFIX}SMS_PROVIDER=twilio needs the E.164 number US and Canadian travellers are texted "
                "from (those countries take no alphanumeric sender), like +15017122661"
            )
        return value

    @field_validator("sms_sender")
    @classmethod
    def _sms_sender(cls, value: str) -> str:
        if not SMS_SENDER_PATTERN.match(value):
            raise ValueError("expected 3 to 11 letters, digits or spaces, at least one a letter, like Transfers")
        return value

    def deployment_problems(self) -> list[str]:
        """What a live deployment must not run with, one line each saying what to set.

        Why here and not as validation errors: tests and tools build ``Settings(environment="live",
        ...)`` in-process to exercise the live guards; refusing is the commands' decision
        (``ops/settings_errors.py``), taken before anything starts."""
        if self.is_sandbox:
            return []
        problems = []
        if not self.secret_key:
            problems.append(
                f"{ENV_PREFIX}SECRET_KEY is required when {ENV_PREFIX}ENVIRONMENT=live: set it to a "
                "long random string (it encrypts partner secrets; keep it, or they cannot be read)"
            )
        if self.allow_private_partner_urls:
            problems.append(
                f"{ENV_PREFIX}ALLOW_PRIVATE_PARTNER_URLS=1 turns the SSRF guard off, which live refuses: "
                "unset it (or set 0)"
            )
        if self.allow_private_webhook_urls:
            problems.append(
                f"{ENV_PREFIX}ALLOW_PRIVATE_WEBHOOK_URLS=1 lets clients' webhooks reach private and loopback "
                "addresses, which live refuses: unset it (or set 0)"
            )
        if self.sandbox_partner:
            problems.append(
                f"{ENV_PREFIX}SANDBOX_PARTNER=1 asks for the sandbox partner, which live never runs: "
                "unset it (or set 0)"
            )
        if self.sms_provider == "sandbox":
            problems.append(
                f"{ENV_PREFIX}SMS_PROVIDER=sandbox keeps travellers' texts in the database instead of sending "
                "them, which live refuses: set twilio (or none, or unset it: texts are then logged, not sent)"
            )
        return problems

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
    def resolved_flight_provider(self) -> str:
        """docs/rules/flights.md#provider: the configured provider, else sandbox in sandbox and none in live."""
        if self.flight_provider is not None:
            return self.flight_provider
        return "sandbox" if self.is_sandbox else "none"

    @property
    def resolved_sms_provider(self) -> str:
        """docs/rules/messages.md#sending: the configured SMS provider, else sandbox in sandbox and none in live."""
        if self.sms_provider is not None:
            return self.sms_provider
        return "sandbox" if self.is_sandbox else "none"

    @property
    def resolved_fx_provider(self) -> str:
        """docs/rules/fx.md#sources: the configured rate provider, else sandbox in sandbox and ecb in live."""
        if self.fx_provider is not None:
            return self.fx_provider
        return "sandbox" if self.is_sandbox else "ecb"

    @property
    def enabled_currencies(self) -> frozenset[str] | None:
        """TRANSFERS_CURRENCIES as a set; None: every active ISO 4217 currency may be used."""
        return frozenset(self.currencies.split(",")) if self.currencies else None

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
    def approval_retry_after(self) -> int:
        """Seconds GET booking suggests between polls of a booking not yet approved."""
        if self.approval_poll_seconds is not None:
            return self.approval_poll_seconds
        return SANDBOX_APPROVAL_POLL_SECONDS if self.is_sandbox else LIVE_APPROVAL_POLL_SECONDS

    @property
    def private_partner_urls_allowed(self) -> bool:
        """Operators' partner URLs may name private and loopback addresses (off unless set)."""
        return self.allow_private_partner_urls

    @property
    def private_webhook_urls_allowed(self) -> bool:
        """Clients' webhook URLs may name private and loopback addresses (off unless set; the test suite's
        receivers listen on loopback)."""
        return self.allow_private_webhook_urls

    @property
    def sandbox_partner_url(self) -> str | None:
        """Where the built-in sandbox partner answers: mounted by this service under its own URL. The partner
        client trusts this URL by identity, with the SSRF guard on (None: no built-in partner here)."""
        return self.service_url + SANDBOX_PARTNER_PATH if self.sandbox_partner_enabled else None


def known_variables() -> frozenset[str]:
    """Every ``TRANSFERS_*`` name this release reads."""
    return frozenset(ENV_PREFIX + name.upper() for name in Settings.model_fields) | OTHER_VARIABLES


def unknown_variables(environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env") -> list[str]:
    """One line per ``TRANSFERS_*`` variable no setting reads, naming the closest known one.

    Why: pydantic-settings ignores unknown variables (``extra="ignore"``), so a misspelled
    ``TRANSFERS_DATABSE_URL`` silently leaves the default in force. Names are compared in
    capitals because the settings read them case-insensitively. ``env_file``: the same ``.env``
    Settings reads, when present."""
    names = dict(os.environ if environ is None else environ)
    if env_file and os.path.isfile(env_file):
        from dotenv import dotenv_values

        names.update({k: v or "" for k, v in dotenv_values(env_file).items()})
    known = known_variables()
    # Compared without the shared prefix, which would make every name look close to every other.
    suffixes = sorted(name.removeprefix(ENV_PREFIX) for name in known)
    lines = []
    for name in sorted({n.upper() for n in names if n.upper().startswith(ENV_PREFIX)} - known):
        close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), suffixes, n=1, cutoff=0.6)
        hint = f"; did you mean {ENV_PREFIX}{close[0]}?" if close else "; see docs/operations/settings.md"
        lines.append(f"{name} is not a setting of this release and is ignored{hint}")
    return lines


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
