"""Authentication of booking-API clients and reverse-API partners by bearer key.

A verified principal is cached in-process for ``auth_cache_seconds`` (default 1 s), keyed by the
key's hash: the hot read path then costs no auth query, and a revocation or suspension takes
effect everywhere within that bound (docs/architecture/reliability.md). Concurrent requests that miss the cache
for the same key share one lookup instead of each running its own (when an entry expires under
load every request in flight would otherwise query at once: docs/operations/performance-history.md#profile). A cached
principal is also found by the ``Authorization`` header it was last presented in, with the same
expiry, so a repeated header costs neither the key's parsing nor its hash
(docs/operations/performance-history.md#served-request-path).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import cast

from transfers.auth.keys import bearer_token, hash_key, hashes_match, parse_key
from transfers.auth.principals import ClientPrincipal, ClientStatus
from transfers.auth.repository import find_key
from transfers.db.engine import Database
from transfers.errors import Refused


@dataclass(frozen=True, slots=True)
class PartnerPrincipal:
    partner_id: int
    name: str
    key_prefix: str


class AuthFailure(Refused):
    """Why a bearer key was refused. ``suspended`` is the only reason told apart (403)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_CACHE_MAX = 10_000


class Authenticator:
    def __init__(self, db: Database, cache_seconds: float = 1.0) -> None:
        self._db = db
        self._ttl = cache_seconds
        self._cache: dict[str, tuple[float, ClientPrincipal | PartnerPrincipal]] = {}
        # header -> (expiry, kind, principal): copied from a hit of _cache, never longer-lived than it
        self._by_header: dict[str, tuple[float, str, ClientPrincipal | PartnerPrincipal]] = {}
        self._lookups: dict[str, asyncio.Future[ClientPrincipal | PartnerPrincipal]] = {}

    async def client(self, authorization: str | None) -> ClientPrincipal:
        principal = await self._principal(authorization, "tk")
        if not isinstance(principal, ClientPrincipal):  # a "tk" key names a client, a "pk" key a partner
            raise AuthFailure("unknown")
        if principal.status != ClientStatus.ACTIVE:
            raise AuthFailure("suspended")
        return principal

    async def partner(self, authorization: str | None) -> PartnerPrincipal:
        principal = await self._principal(authorization, "pk")
        if not isinstance(principal, PartnerPrincipal):
            raise AuthFailure("unknown")
        return principal

    async def _principal(self, authorization: str | None, kind: str) -> ClientPrincipal | PartnerPrincipal:
        now = time.monotonic()
        if authorization is not None:
            seen = self._by_header.get(authorization)
            if seen is not None and seen[0] > now and seen[1] == kind:
                return seen[2]
        token = bearer_token(authorization)
        if token is None:
            raise AuthFailure("missing")
        parsed = parse_key(token)
        if parsed is None or parsed[0] != kind:
            raise AuthFailure("malformed")
        digest = hash_key(token)
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            if authorization is not None:  # always, here: a token came from it
                if len(self._by_header) >= _CACHE_MAX:
                    self._by_header.clear()
                self._by_header[authorization] = (cached[0], kind, cached[1])
            return cached[1]
        lookup = self._lookups.get(digest)
        if lookup is None or lookup.get_loop() is not asyncio.get_running_loop():
            lookup = asyncio.ensure_future(self._lookup(token, kind, parsed[1], digest, now))
            self._lookups[digest] = lookup
            lookup.add_done_callback(lambda done: self._forget_lookup(digest, done))
        return await asyncio.shield(lookup)

    def _forget_lookup(self, digest: str, done: asyncio.Future[ClientPrincipal | PartnerPrincipal]) -> None:
        if self._lookups.get(digest) is done:
            del self._lookups[digest]
        if not done.cancelled():
            done.exception()  # retrieved here, so a lookup whose callers all went away logs nothing

    async def _lookup(
        self, token: str, kind: str, prefix: str, digest: str, now: float
    ) -> ClientPrincipal | PartnerPrincipal:
        row = await find_key(self._db, prefix)
        if row is None or not hashes_match(row.key_hash, token) or row.revoked_at is not None:
            raise AuthFailure("unknown")
        principal: ClientPrincipal | PartnerPrincipal
        if kind == "tk":
            if row.client_id is None:
                raise AuthFailure("unknown")
            # a client key's row has the client's columns (NOT NULL there), passed on as read
            principal = ClientPrincipal(
                client_id=int(row.client_id),
                name=cast(str, row.client_name),
                pay_type=cast(str, row.pay_type),
                status=cast(str, row.client_status),
                can_create=bool(row.can_create),
                can_cancel=bool(row.can_cancel),
                currency=cast(str, row.currency),
                key_prefix=prefix,
            )
        else:
            if row.partner_id is None or row.partner_status != "enabled":
                raise AuthFailure("unknown")
            principal = PartnerPrincipal(
                partner_id=int(row.partner_id), name=cast(str, row.partner_name), key_prefix=prefix
            )
        if self._ttl > 0:
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[digest] = (now + self._ttl, principal)
        return principal
