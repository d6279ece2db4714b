"""The service's public base URL (``TRANSFERS_PUBLIC_BASE_URL``, ``Settings.service_url``) for the absolute
links a booking carries: ``ride.tracking_url`` (docs/rules/ride.md#tracking-page).

Why a process-wide value rather than a parameter: the BookingResource is rendered deep inside the state
machine's side effects (every client event's snapshot, ``bookings/effects.py``), which see a booking and
the clock, never the settings. One deployment has one public address, so ``Services.build`` sets it once
per process (API, worker, CLI) from its settings, before any request; until then it is the default of
``Settings.service_url``. Nothing else is kept here.
"""

from __future__ import annotations

DEFAULT = "http://127.0.0.1:8000"
_base = [DEFAULT]


def configure(base_url: str) -> None:
    """Set the process's public base URL (``Services.build`` does, from ``Settings.service_url``)."""
    _base[0] = (base_url or DEFAULT).rstrip("/")


def base_url() -> str:
    return _base[0]
