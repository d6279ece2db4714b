"""Secrets out of what operators see: URLs with the password masked, and known secrets cut from text
(driver error messages sometimes quote the DSN they were given)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"


def mask_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``; anything unparsable is shown as given
    minus everything between ``://`` and the last ``@`` (where a password would be)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        password = None
        parts = None
    if parts is None:
        scheme, sep, rest = url.partition("://")
        return f"{scheme}{sep}{MASK}@{rest.rsplit('@', 1)[1]}" if sep and "@" in rest else url
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


def url_password(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-trivial secret replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 3:
            text = text.replace(secret, MASK)
    return text
