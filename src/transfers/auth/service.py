"""Authentication of booking-API clients and reverse-API partners by bearer key.

A verified principal is cached in-process for ``auth_cache_seconds`` (default 1 s), keyed by the
key's hash: the hot read path then costs no auth query, and a revocation or suspension takes
effect everywhere within that bound (README, "Security").
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from transfers.auth.keys import bearer_token, hash_key, hashes_match, parse_key
from transfers.auth.repository import find_key
from transfers.clients.models import ClientPrincipal, ClientStatus
from transfers.db.engine import Database


@dataclass(frozen=True, slots=True)
class PartnerPrincipal:
    partner_id: int
    name: str
    key_prefix: str


class AuthFailure(Exception):
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

    async def client(self, authorization: str | None) -> ClientPrincipal:
        principal = await self._principal(authorization, "tk")
        assert isinstance(principal, ClientPrincipal)
        if principal.status != ClientStatus.ACTIVE:
            raise AuthFailure("suspended")
        return principal

    async def partner(self, authorization: str | None) -> PartnerPrincipal:
        principal = await self._principal(authorization, "pk")
        assert isinstance(principal, PartnerPrincipal)
        return principal

    async def _principal(self, authorization: str | None, kind: str) -> ClientPrincipal | PartnerPrincipal:
        token = bearer_token(authorization)
        if token is None:
            raise AuthFailure("missing")
        parsed = parse_key(token)
        if parsed is None or parsed[0] != kind:
            raise AuthFailure("malformed")
        digest = hash_key(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
        async with self._db.read() as conn:
            row = await find_key(conn, parsed[1])
        if row is None or not hashes_match(row["key_hash"], token) or row["revoked_at"] is not None:
            raise AuthFailure("unknown")
        principal: ClientPrincipal | PartnerPrincipal
        if kind == "tk":
            if row["client_id"] is None:
                raise AuthFailure("unknown")
            principal = ClientPrincipal(
                client_id=int(row["client_id"]), name=row["client_name"], pay_type=row["pay_type"],
                status=row["client_status"], can_create=bool(row["can_create"]),
                can_cancel=bool(row["can_cancel"]), currency=row["currency"], key_prefix=parsed[1],
            )
        else:
            if row["partner_id"] is None or row["partner_status"] != "enabled":
                raise AuthFailure("unknown")
            principal = PartnerPrincipal(
                partner_id=int(row["partner_id"]), name=row["partner_name"], key_prefix=parsed[1]
            )
        if self._ttl > 0:
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[digest] = (now + self._ttl, principal)
        return principal
