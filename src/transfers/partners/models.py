"""Partners (transport companies): service area, markup and URL rules. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from urllib.parse import urlsplit

from transfers import money
from transfers.cancellation.policy import Policy
from transfers.errors import Invalid
from transfers.partners import ssrf

EVERY_AIRPORT = "*"


@dataclass(frozen=True)
class PartnerRecord:
    partner_id: int
    name: str
    base_url: str
    airports: tuple[str, ...]
    markup_percent: Decimal
    status: str
    is_sandbox: bool
    hosted: bool = False  # answers from its rate card, in-process (hosted/)
    cancellation_policy: Policy | None = None  # the default for its vehicles (docs/rules/cancellation.md)

    def serves(self, iata: str) -> bool:
        return EVERY_AIRPORT in self.airports or iata in self.airports


def sell_price(net: Decimal, markup_percent: Decimal, currency: str) -> Decimal:
    """Partner net price plus markup, rounded half-up to the currency's decimals (docs/rules/search.md).
    ``money.MoneyError`` when ``net`` has more decimals than its currency (a JPY quote of 45.5)."""
    return _remembered_sell_price(net, markup_percent, currency)


def _sell_price(net: Decimal, markup_percent: Decimal, currency: str) -> Decimal:
    return money.round_half_up(money.exact(net, currency) * (_HUNDRED + markup_percent) / _HUNDRED, currency)


_HUNDRED = Decimal(100)
# A search prices every vehicle and extra of every answer (~40 per 10-partner search), and partners
# quote the same few prices at the same markup again and again. Exact: the result is
# rounded to the currency's decimals, so it depends only on the values, never on the exponents of
# equal keys (45.1 and 45.10) or the sign of a zero; a Decimal is immutable, so sharing one is safe;
# errors are not cached.
_remembered_sell_price = lru_cache(maxsize=4096)(_sell_price)


class InvalidPartnerUrl(Invalid, ValueError):
    """A partner (or webhook) URL that is not http(s), has credentials, or names a refused address."""


def check_base_url(url: str, *, allow_private: bool) -> str:
    """http(s) only, a host, no credentials or fragment; literal private addresses refused unless allowed.

    Names are resolved and re-checked at call time by the SSRF guard (hardening issue); this is
    the registration-time check of docs/rules/partners.md.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise InvalidPartnerUrl("the partner URL must be http or https")
    if not parts.hostname:
        raise InvalidPartnerUrl("the partner URL needs a host")
    if parts.username or parts.password or parts.fragment or parts.query:
        raise InvalidPartnerUrl("the partner URL may not carry credentials, a query or a fragment")
    if not allow_private and is_private_host(parts.hostname):
        raise InvalidPartnerUrl("private, loopback and link-local partner addresses are not allowed here")
    return url.rstrip("/")


def is_private_host(host: str) -> bool:
    # Hardening (SSRF): one classifier for registration and call time; it also reads the literal
    # forms a resolver accepts (127.1, 2130706433, 0x7f000001, ::ffff:127.0.0.1, ...).
    return ssrf.is_private_host(host)
