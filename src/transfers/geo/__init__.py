"""Geocoding (docs/rules/agency-portal.md#geocoder): text -> places, for the agency portal's destination and the partner
portal's price preview. ``from_settings`` picks the implementation ``TRANSFERS_GEOCODER`` names."""

from __future__ import annotations

from transfers.config import Settings
from transfers.geo.builtin import BuiltinGeocoder
from transfers.geo.nominatim import NominatimGeocoder
from transfers.geo.places import DEFAULT_LIMIT, Geocoder, GeocoderUnavailable, Place, fold

__all__ = [
    "DEFAULT_LIMIT",
    "BuiltinGeocoder",
    "Geocoder",
    "GeocoderUnavailable",
    "NominatimGeocoder",
    "Place",
    "fold",
    "from_settings",
]


def from_settings(settings: Settings) -> Geocoder:
    if settings.geocoder == "nominatim":
        return NominatimGeocoder(settings.geocoder_url, timeout_seconds=settings.geocoder_timeout_seconds)
    return BuiltinGeocoder()
