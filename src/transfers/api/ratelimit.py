"""Rate limits per API key (docs/rules/reliability.md#rate-limits): a token bucket per key prefix, checked after
authentication.

Each key (client ``tk_…`` and partner ``pk_…`` alike) has a bucket of ``rate_limit_burst`` tokens
(default 100) refilled continuously at ``rate_limit_per_minute`` / 60 tokens per second (default
600/min = 10/s). A request takes one token; with none left it gets 429 ``RATE_LIMITED``. Because the
check runs only after the key was verified, a flood of invalid keys never drains a real key's budget.

* Without ``TRANSFERS_REDIS_URL`` the buckets live in the API process: with N processes a key gets
  N budgets.
* With it, one Redis hash per key holds the bucket and a Lua script updates it atomically (Redis
  server time), so every API process shares one budget. If Redis cannot be reached the limiter fails
  open to the in-process buckets, logs ``rate_limit_redis_unavailable`` once per outage and tries
  Redis again after ``_REDIS_RETRY_SECONDS``.

Headers (IETF draft-ietf-httpapi-ratelimit-headers, the ``RateLimit-*`` field form): on every
rate-limited route's answer ``RateLimit-Limit`` (bucket size), ``RateLimit-Remaining`` (whole tokens
left), ``RateLimit-Reset`` (seconds until the bucket is full again) and ``RateLimit-Policy``
(``<burst>;w=<seconds to refill it>``); a 429 adds ``Retry-After`` (seconds until one token, >= 1).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import structlog
from fastapi import Request
from starlette.types import Scope

from transfers.config import Settings
from transfers.errors import ErrorCode, Refused
from transfers.rows import frozen_value

log = structlog.get_logger("transfers.ratelimit")

STATE_KEY = "rate_limit_headers"
_REDIS_RETRY_SECONDS = 5.0
_MEMORY_MAX_KEYS = 50_000

# KEYS[1] bucket; ARGV[1] refill tokens/second, ARGV[2] capacity. Returns {allowed, tokens-left}.
_LUA_TAKE = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
"""


@frozen_value  # one per request: the frozen dataclass's __init__ cost ~1 µs more (transfers/rows.py)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until the bucket is full again
    retry_after: int  # until one token is available (0 when allowed)
    window_seconds: int

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_seconds),
            "RateLimit-Policy": f"{self.limit};w={self.window_seconds}",
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """``headers()`` as an ASGI answer's header list (names lower-cased), built directly."""
        raw = [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-reset", str(self.reset_seconds).encode()),
            (b"ratelimit-policy", f"{self.limit};w={self.window_seconds}".encode()),
        ]
        if not self.allowed:
            raw.append((b"retry-after", str(self.retry_after).encode()))
        return raw


@dataclass(frozen=True)
class Bucket:
    rate: float  # tokens per second
    burst: int

    @cached_property
    def window_seconds(self) -> int:
        return max(1, math.ceil(self.burst / self.rate))

    def decide(self, allowed: bool, tokens: float) -> Decision:
        missing = max(0.0, self.burst - tokens)
        return Decision(
            allowed,
            self.burst,
            max(0, math.floor(tokens)),
            math.ceil(missing / self.rate - 1e-9),
            0 if allowed else max(1, math.ceil((1 - tokens) / self.rate - 1e-9)),
            self.window_seconds,
        )


class MemoryBuckets:
    """Token buckets in this process (the default, and the fallback when Redis is unreachable)."""

    def __init__(self, bucket: Bucket, clock: Callable[[], float] = time.monotonic) -> None:
        self.bucket = bucket
        self._clock = clock
        self._state: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> Decision:
        now = self._clock()
        rate, burst = self.bucket.rate, self.bucket.burst
        tokens, at = self._state.get(key, (float(burst), now))
        tokens = min(float(burst), tokens + max(0.0, now - at) * rate)
        allowed = tokens >= 1
        if allowed:
            tokens -= 1
        if key not in self._state and len(self._state) >= _MEMORY_MAX_KEYS:
            self._prune(now)
        self._state[key] = (tokens, now)
        return self.bucket.decide(allowed, tokens)

    def _prune(self, now: float) -> None:
        """Forget buckets that have refilled completely (they behave exactly like new ones)."""
        rate, burst = self.bucket.rate, self.bucket.burst
        full = [k for k, (tokens, at) in self._state.items() if tokens + (now - at) * rate >= burst]
        for key in full:
            del self._state[key]


class RateLimiter:
    def __init__(
        self,
        bucket: Bucket,
        *,
        redis_url: str = "",
        redis_prefix: str = "transfers:ratelimit:",
        redis_timeout: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bucket = bucket
        self.memory = MemoryBuckets(bucket, clock)
        self._clock = clock
        self._prefix = redis_prefix
        self._redis: Any = None
        self._script: Any = None
        self._redis_down_until = 0.0
        self._redis_down = False
        if redis_url:
            import redis.asyncio as aioredis

            self._redis = aioredis.from_url(
                redis_url,
                socket_connect_timeout=redis_timeout,
                socket_timeout=redis_timeout,
                health_check_interval=30,
            )
            self._script = self._redis.register_script(_LUA_TAKE)

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter | None:
        """``None`` (no limit) when ``rate_limit_per_minute`` or ``rate_limit_burst`` is 0 or less."""
        if settings.rate_limit_per_minute <= 0 or settings.rate_limit_burst <= 0:
            return None
        return cls(
            Bucket(settings.rate_limit_per_minute / 60.0, settings.rate_limit_burst),
            redis_url=settings.redis_url,
            redis_prefix=settings.rate_limit_redis_prefix,
            redis_timeout=settings.rate_limit_redis_timeout_seconds,
        )

    def check_here(self, key_prefix: str) -> Decision | None:
        """``check``'s answer when it is this process's bucket (no Redis, or Redis down), taken
        without a coroutine; ``None``: ask ``check`` (Redis)."""
        if self._redis is None or self._clock() < self._redis_down_until:
            return self.memory.take(key_prefix)
        return None

    async def check(self, key_prefix: str) -> Decision:
        here = self.check_here(key_prefix)
        if here is not None:
            return here
        try:
            allowed, tokens = await self._script(
                keys=[self._prefix + key_prefix], args=[repr(self.bucket.rate), self.bucket.burst]
            )
        except Exception as exc:  # Redis down, slow or misconfigured: fail open to this process's buckets
            self._redis_down_until = self._clock() + _REDIS_RETRY_SECONDS
            if not self._redis_down:
                self._redis_down = True
                log.warning(
                    "rate_limit_redis_unavailable",
                    error=type(exc).__name__,
                    detail=str(exc)[:200],
                    fallback="in-process buckets",
                )
            return self.memory.take(key_prefix)
        if self._redis_down:
            self._redis_down = False
            log.info("rate_limit_redis_recovered")
        return self.bucket.decide(bool(int(allowed)), float(tokens))

    async def aclose(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()


async def enforce(request: Request, key_prefix: str) -> None:
    """Take one token for this key; 429 ``RATE_LIMITED`` when none is left. Call after authentication."""
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is None:
        return
    decision = limiter.check_here(key_prefix)
    if decision is None:
        decision = await limiter.check(key_prefix)
    if not decision.allowed:
        raise Refused(
            ErrorCode.RATE_LIMITED,
            f"Too many requests for this API key (at most {limiter.bucket.burst} at once, then "
            f"{round(limiter.bucket.rate * 60)} per minute); retry after {decision.retry_after} s.",
            headers=decision.headers(),
        )
    request.scope.setdefault("state", {})[STATE_KEY] = decision  # request.state's dict, as setattr writes it


def allowed_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The ``RateLimit-*`` headers of an allowed request, added to its answer by ``RequestPlumbing``
    whatever the route returned. A 429 carries them through ``DomainError.headers`` instead."""
    decision: Decision | None = scope.get("state", {}).get(STATE_KEY)
    if decision is None:
        return []
    return decision.raw_headers()
