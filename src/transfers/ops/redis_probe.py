"""Is the configured Redis answering? (The shared rate-limit budget, docs/integrators/rate-limits.md.)"""

from __future__ import annotations

from transfers.ops.errors import BackendUnavailable
from transfers.ops.masking import mask_url, scrub, url_password


async def ping_redis(url: str, timeout: float) -> None:
    """One PING within ``timeout`` seconds; ``BackendUnavailable`` naming the Redis (password masked) if not."""
    import redis.asyncio as aioredis
    from redis import exceptions as redis_errors

    client = aioredis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await client.ping()
    except redis_errors.AuthenticationError as exc:
        raise _unavailable(url, f"refused the login: {exc}", transient=False) from exc
    except (redis_errors.RedisError, OSError) as exc:
        raise _unavailable(url, f"unreachable: {_reason(exc)}", transient=True) from exc
    finally:
        await client.aclose()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rstrip(".")


def _unavailable(url: str, what: str, *, transient: bool) -> BackendUnavailable:
    return BackendUnavailable(scrub(f"Redis {mask_url(url)} {what}", [url_password(url)]), transient=transient)
