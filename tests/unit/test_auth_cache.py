"""auth/service.py's cache of verified principals, found by the key's hash or by the Authorization header
last presented (same expiry, same kind check: a repeated header skips the key's parsing and hashing, never
the refusals); api/ratelimit.py's headers of a decision as the answer's raw header list."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from transfers.api.ratelimit import STATE_KEY, Bucket, MemoryBuckets, allowed_headers
from transfers.auth import service
from transfers.auth.keys import issue_key
from transfers.auth.repository import KeyOwner
from transfers.auth.service import Authenticator, AuthFailure

KEY = issue_key("tk")
OWNER = KeyOwner(
    key_hash=KEY.key_hash,
    revoked_at=None,
    client_id=7,
    partner_id=None,
    client_name="Acme",
    pay_type="wallet",
    client_status="active",
    can_create=True,
    can_cancel=True,
    currency="EUR",
    partner_name=None,
    partner_status=None,
)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """The authenticator's clock and key lookups under the test's control."""
    state = SimpleNamespace(now=100.0, lookups=0, owner=OWNER)

    async def find_key(_: Any, prefix: str) -> KeyOwner | None:
        state.lookups += 1
        return state.owner if prefix == KEY.prefix else None

    monkeypatch.setattr(service, "find_key", find_key)
    monkeypatch.setattr(service, "time", SimpleNamespace(monotonic=lambda: state.now))
    return state


async def test_a_repeated_header_is_answered_from_the_cache_until_it_expires(world: SimpleNamespace) -> None:
    auth = Authenticator(None, cache_seconds=1.0)  # type: ignore[arg-type]
    header = f"Bearer {KEY.key}"
    first = await auth.client(header)
    assert first.client_id == 7 and world.lookups == 1
    assert await auth.client(header) is first  # the hash's entry, copied to the header's
    assert await auth.client(f"bearer   {KEY.key}") is first  # another spelling: parsed and hashed
    world.owner = None  # revoked meanwhile: seen once the cached principal expires, not before
    world.now += 0.5
    assert await auth.client(header) is first and world.lookups == 1
    world.now += 0.5
    with pytest.raises(AuthFailure, match="unknown"):
        await auth.client(header)
    assert world.lookups == 2


async def test_a_cached_header_keeps_the_kind_check_and_the_suspension(world: SimpleNamespace) -> None:
    auth = Authenticator(None, cache_seconds=1.0)  # type: ignore[arg-type]
    header = f"Bearer {KEY.key}"
    await auth.client(header)
    await auth.client(header)
    with pytest.raises(AuthFailure, match="malformed"):  # a client key on the reverse API
        await auth.partner(header)
    suspended = Authenticator(None, cache_seconds=1.0)  # type: ignore[arg-type]
    world.owner = dataclasses.replace(OWNER, client_status="suspended")
    for _ in range(2):
        with pytest.raises(AuthFailure, match="suspended"):
            await suspended.client(header)


async def test_without_a_cache_every_request_looks_its_key_up(world: SimpleNamespace) -> None:
    auth = Authenticator(None, cache_seconds=0)  # type: ignore[arg-type]
    for _ in range(3):
        await auth.client(f"Bearer {KEY.key}")
    assert world.lookups == 3


@pytest.mark.parametrize("burst", [3, 100])
def test_the_rate_limit_headers_as_raw_headers(burst: int) -> None:
    buckets = MemoryBuckets(Bucket(2.5, burst), clock=lambda: 0.0)
    decisions = [buckets.take("tk_x") for _ in range(burst + 1)]
    assert not decisions[-1].allowed and decisions[0].allowed
    for decision in decisions:
        assert decision.raw_headers() == [(k.lower().encode(), v.encode()) for k, v in decision.headers().items()]
    assert allowed_headers({"state": {STATE_KEY: decisions[0]}}) == decisions[0].raw_headers()
    assert allowed_headers({"state": {}}) == allowed_headers({}) == []
