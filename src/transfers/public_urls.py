"""The service's public base URL (``TRANSFERS_PUBLIC_BASE_URL``, ``Settings.service_url``) for the absolute
links a booking carries: ``ride.tracking_url`` (docs/rules/ride.md#tracking-page).

Why a process-wide value rather than a parameter: the BookingResource is rendered deep inside the state
machine's side effects (every client event's snapshot, ``bookings/effects.py``), which see a booking and
the clock, never the settings. One deployment has one public address, so ``Services.build`` sets it once
per process (API, worker, CLI) from its settings, before any request; until then it is the default of
``Settings.service_url``. Beside it, for the same reason, the key that signs the traveller's rating links
(``bookings/rating_link.py``), derived from ``TRANSFERS_SECRET_KEY``. Nothing else is kept here.
"""

from __future__ import annotations

import hashlib
import secrets

DEFAULT = "http://127.0.0.1:8000"
_base = [DEFAULT]
# Until ``Services.build`` sets it: a key of this process only (its rating links open nothing elsewhere).
_link_key = [secrets.token_bytes(32)]


def configure(base_url: str) -> None:
    """Set the process's public base URL (``Services.build`` does, from ``Settings.service_url``)."""
    _base[0] = (base_url or DEFAULT).rstrip("/")


def base_url() -> str:
    return _base[0]


def configure_link_key(secret_key: str) -> None:
    """Derive the rating links' signing key from the service's secret key (``Services.build`` does): every
    process of a deployment signs and checks the same links, and no other use of the secret shares it."""
    _link_key[0] = hashlib.sha256(b"transfers rating link\x00" + secret_key.encode()).digest()


def link_key() -> bytes:
    return _link_key[0]
