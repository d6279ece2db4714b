"""Configuration of one sandbox partner instance (embedded in the service or standalone)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from transfers.clock import Clock, SystemClock


@dataclass(frozen=True)
class SandboxPartnerConfig:
    service_url: str  # the booking service's base URL; reverse calls go to {service_url}/api/v1/reverse/...
    api_key: str  # the partner's reverse-API key (``transfers partners create`` prints it)
    signing_secret: str  # whsec_...: the service signs every call with it
    outbound_token: str  # the bearer token the service presents on every call
    approve_after_seconds: float = 10.0
    currency: str = "EUR"
    max_bookings: int = 100_000
    # Waits between reverse-call attempts after a transient failure; its length bounds the retries.
    reverse_retry_delays: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0)
    reverse_timeout_seconds: float = 5.0
    signature_tolerance_seconds: int = 300
    max_body_bytes: int = 65_536
    clock: Clock = field(default_factory=SystemClock)

    def __post_init__(self) -> None:
        if urlsplit(self.service_url).scheme not in ("http", "https") or not urlsplit(self.service_url).hostname:
            raise ValueError("service_url must be an http(s) URL with a host")
        if not self.api_key or not self.outbound_token or not self.signing_secret:
            raise ValueError("api_key, outbound_token and signing_secret are required")
        if not self.approve_after_seconds >= 0:
            raise ValueError("approve_after_seconds must be zero or more")
        if not re.fullmatch(r"[A-Z]{3}", self.currency):
            raise ValueError("currency must be a three-letter upper-case ISO 4217 code")
        if self.max_bookings < 1:
            raise ValueError("max_bookings must be positive")
