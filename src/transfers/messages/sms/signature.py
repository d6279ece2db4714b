"""Twilio's request signature (docs/rules/messages.md#opt-out): how the service knows a callback came
from Twilio.

Twilio signs each request it makes to us with the account's auth token: ``X-Twilio-Signature`` =
base64(HMAC-SHA1(token, URL + each POST field's name and value, the fields sorted by name)), where URL is
the full address Twilio called, query string included. The address is ours to rebuild: the service
reads it as ``TRANSFERS_PUBLIC_BASE_URL`` + the path (+ ``?query``), never from the request's Host
header, which the caller writes. A field sent several times adds each of its values, sorted, as Twilio's
own validators do; an explicit default port (``:443``, ``:80``) is accepted with or without it, since
Twilio has signed both ways. Comparison is in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

HEADER = "X-Twilio-Signature"
_DEFAULT_PORTS = {"https": 443, "http": 80}


def compute(auth_token: str, url: str, fields: Iterable[tuple[str, str]]) -> str:
    """The signature Twilio sends for a POST of ``fields`` to ``url``."""
    values: dict[str, set[str]] = {}
    for name, value in fields:
        values.setdefault(name, set()).add(value)
    text = url + "".join(name + value for name in sorted(values) for value in sorted(values[name]))
    digest = hmac.new(auth_token.encode(), text.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def is_valid(auth_token: str, url: str, fields: Iterable[tuple[str, str]], signature: str | None) -> bool:
    """Whether ``signature`` is Twilio's for this request. False without a token or a signature."""
    if not auth_token or not signature:
        return False
    pairs = list(fields)
    given = signature.strip().encode()
    return any(
        hmac.compare_digest(compute(auth_token, candidate, pairs).encode(), given) for candidate in _url_variants(url)
    )


def _url_variants(url: str) -> list[str]:
    """The URL as given and with its default port written or left out (one of the two is Twilio's)."""
    parts = urlsplit(url)
    default = _DEFAULT_PORTS.get(parts.scheme)
    try:
        port = parts.port
    except ValueError:
        return [url]
    if default is None or parts.hostname is None:
        return [url]
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    userinfo = parts.netloc.rpartition("@")[0]
    prefix = userinfo + "@" if userinfo else ""
    if port is None:
        other = prefix + f"{host}:{default}"
    elif port == default:
        other = prefix + host
    else:
        return [url]
    return [url, urlunsplit((parts.scheme, other, parts.path, parts.query, parts.fragment))]
