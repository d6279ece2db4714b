"""What "the same request" means for an Idempotency-Key (docs/rules/reliability.md#idempotency): meaning, not bytes.

Two requests are the same when method, path, query and body mean the same, as Stripe compares
parameters. A retry from another HTTP library, or from another process after the first one
crashed, may serialise the same JSON with other whitespace, key order or string escapes; it must
be replayed, not refused with ``IDEMPOTENCY_KEY_REUSED``.

* A JSON body compares by its canonical form: parsed, object keys sorted, strings re-escaped one
  way, numbers **as written** (``1`` and ``1.0`` differ: the service reads a JSON number's
  spelling, e.g. an integer field refuses ``1.0``, so they are not the same request).
* The query compares by its parsed parameters: percent-encoding normalised, names in sorted
  order, the values of a repeated name kept in their order (``status=A&status=B`` is not
  ``status=B&status=A``, a list is ordered).
* A body that is not JSON (or not UTF-8, or JSON with NaN) compares by its bytes; so does a query
  that does not decode as UTF-8.

Upgrade: rows stored before this module existed hold ``legacy`` (SHA-256 over the raw bytes). A
row lives at most 24 h, so ``run_idempotent`` accepts either digest; one TTL after the deploy no
legacy row is left and the ``legacy`` comparison can be removed. Both digests are 64 hex
characters (the column is ``String(64)``: no migration); the canonical one hashes a version tag
first, so it never equals the legacy digest of some other request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

_VERSION = b"transfers-idempotency-v2"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    canonical: str  # stored for new rows
    legacy: str  # what the code before the SDK's release stored: matched against rows written before the deploy

    def matches(self, stored: str) -> bool:
        return stored in (self.canonical, self.legacy)


def fingerprint(method: str, path: str, query: str, body: bytes) -> Fingerprint:
    canonical = _digest([_VERSION, method.encode(), path.encode(), *canonical_query(query), *canonical_body(body)])
    legacy = _digest([method.encode(), path.encode(), query.encode(), body])
    return Fingerprint(canonical, legacy)


def canonical_body(body: bytes) -> list[bytes]:
    """``[b"json", <canonical text>]`` for a JSON document, else ``[b"bytes", <body>]``."""
    try:
        value = json.loads(
            body.decode("utf-8"), parse_int=_Number, parse_float=_Number, parse_constant=_refuse_constant
        )
        return [b"json", _canonical(value).encode("utf-8", "surrogatepass")]
    except (UnicodeDecodeError, ValueError, RecursionError):
        return [b"bytes", body]


def canonical_query(query: str) -> list[bytes]:
    """Parameters sorted by name (stable: a repeated name keeps its values' order), else the raw text."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return [b"raw-query", query.encode("utf-8", "surrogateescape")]
    parts = [b"query"]
    for name, value in sorted(pairs, key=lambda pair: pair[0]):
        parts += [name.encode("utf-8", "surrogatepass"), value.encode("utf-8", "surrogatepass")]
    return parts


class _Number(str):
    """A JSON number kept as the text it was written with (``1`` and ``1.0`` stay apart)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN/Infinity are no JSON (the service answers MALFORMED_JSON): compare by bytes


def _canonical(value: Any) -> str:
    if isinstance(value, _Number):
        return str.__str__(value)
    if isinstance(value, str):
        return json.dumps(value)  # ensure_ascii: "é" and "\u00e9" become one spelling
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + _canonical(v) for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    return json.dumps(value)  # true, false, null


def _digest(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
