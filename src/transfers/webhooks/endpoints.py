"""The client's webhook endpoints (docs/rules/webhooks.md): create (the secret shown once), list, get,
patch, delete, test ping, secret rotation and the delivery log. Scoped to the client: another
client's endpoint id is answered exactly like a missing one (404 ``NOT_FOUND``).

Input is checked field by field in this order, each with its docs/rules/webhooks.md code and nothing
written on a refusal: unknown fields (``INVALID_WEBHOOK_ENDPOINT``), ``url``
(``INVALID_WEBHOOK_URL``), ``events`` (``INVALID_WEBHOOK_EVENT``), ``description`` and ``status``
(``INVALID_WEBHOOK_ENDPOINT``), then the limit of 10 endpoints (``WEBHOOK_ENDPOINT_LIMIT``).
URLs follow the partner URL rules (``partners.models.check_base_url``: http(s), a host, no
credentials, query or fragment) and the webhooks' own SSRF guard (``webhooks/guard.py``, on unless
``TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS=1``): the host must be, or resolve only to, public addresses;
the guard is applied again at every delivery.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from transfers import paging
from transfers.client_events import events
from transfers.client_events import repository as events_repo
from transfers.clients import repository as clients_repo
from transfers.clients.models import ClientPrincipal
from transfers.errors import ErrorCode, Invalid, NotFound, Refused
from transfers.partners.models import InvalidPartnerUrl, check_base_url
from transfers.partners.signing import new_signing_secret
from transfers.services import Services
from transfers.webhooks import guard, wording
from transfers.webhooks import repository as repo
from transfers.webhooks.models import CLIENT_WEBHOOK, Endpoint, LoggedDelivery

MAX_ENDPOINTS = 10
MAX_URL_CHARS = 2000
MAX_DESCRIPTION_CHARS = 500
ROTATION_OVERLAP = timedelta(hours=24)
DELIVERY_WINDOW = timedelta(hours=24)
SUBSCRIBABLE = frozenset(t.value for t in events.EventType)
CREATE_FIELDS = frozenset({"url", "events", "description"})
PATCH_FIELDS = frozenset({"url", "events", "description", "status"})


def _refuse(code: ErrorCode, message: str | None = None) -> Invalid:
    return Invalid(code, message)


def not_found() -> NotFound:
    return NotFound(ErrorCode.NOT_FOUND, "No such webhook endpoint.")


# --- checks ------------------------------------------------------------------------------------------


def _unknown_fields(body: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _refuse(
            ErrorCode.INVALID_WEBHOOK_ENDPOINT,
            f"unknown field {unknown[0][:40]!r}; allowed: {', '.join(sorted(allowed))}.",
        )


async def check_url(svc: Services, value: Any) -> str:
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_URL_CHARS
        or not value.isprintable()
        or value != value.strip()
    ):
        raise _refuse(
            ErrorCode.INVALID_WEBHOOK_URL, f"url must be an http(s) URL of at most {MAX_URL_CHARS} characters."
        )
    allow_private = svc.settings.private_webhook_urls_allowed
    try:
        check_base_url(value, allow_private=True)  # the shape; the guard below reads every spelling of a host
        parts = urlsplit(value)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except (InvalidPartnerUrl, ValueError) as exc:
        raise _refuse(ErrorCode.INVALID_WEBHOOK_URL, str(exc).replace("partner", "webhook")) from None
    if not allow_private and parts.hostname:
        await guard.check_host(parts.hostname, port, svc.webhook_resolver)  # 422 INVALID_WEBHOOK_URL
    return value


def check_events(value: Any) -> list[str]:
    if not isinstance(value, list) or not value or len(value) > len(SUBSCRIBABLE) + 1:
        raise _refuse(ErrorCode.INVALID_WEBHOOK_EVENT)
    chosen: list[str] = []
    for item in value:
        if not isinstance(item, str) or (item != events.EVERY_EVENT and item not in SUBSCRIBABLE):
            shown = item[:60] if isinstance(item, str) else type(item).__name__
            raise _refuse(
                ErrorCode.INVALID_WEBHOOK_EVENT,
                f"unknown event type {shown!r}; known: *, {', '.join(sorted(SUBSCRIBABLE))}.",
            )
        if item not in chosen:
            chosen.append(item)
    # "*" names every event type but those sent only to endpoints naming them (docs/rules/ride.md#client-events)
    if events.EVERY_EVENT in chosen and any(e != events.EVERY_EVENT and e not in events.NAMED_ONLY for e in chosen):
        raise _refuse(
            ErrorCode.INVALID_WEBHOOK_EVENT,
            '"*" already names every event type but booking.driver_position: send it alone or with that one.',
        )
    return chosen


def check_description(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > MAX_DESCRIPTION_CHARS):
        raise _refuse(
            ErrorCode.INVALID_WEBHOOK_ENDPOINT,
            f"description must be a string of at most {MAX_DESCRIPTION_CHARS} characters, or null.",
        )
    return value


def check_status(value: Any) -> str:
    if value not in (repo.ENABLED, repo.DISABLED):
        raise _refuse(ErrorCode.INVALID_WEBHOOK_ENDPOINT, 'status must be "enabled" or "disabled".')
    return str(value)


# --- views -------------------------------------------------------------------------------------------


def view(row: Endpoint) -> dict[str, Any]:
    """The endpoint as the API answers it (JSON: never its secrets)."""
    return {
        "id": row.public_id,
        "url": row.url,
        "events": list(row.events),
        "description": row.description,
        "status": row.status,
        "created_at": row.created_at.isoformat(),
    }


def _delivery_view(row: LoggedDelivery) -> dict[str, Any]:
    pending = row.status == repo.PENDING
    return {
        "event_id": row.event_id,
        "type": row.type,
        "status": row.status,
        "attempts": row.attempts,
        "last_http_status": row.last_http_status,
        "last_outcome": wording.outcome(row.status, row.attempts, row.last_http_status, row.last_error),
        "next_attempt_at": row.next_attempt_at.isoformat() if pending else None,
        "created_at": row.created_at.isoformat(),
    }


# --- use cases ---------------------------------------------------------------------------------------
# ``actor``: who acted when a person did, through a page (the agency portal's ``Developers``,
# docs/rules/agency-portal.md#same-use-cases): then the change and its ``admin_audit`` row commit together.
# The API's own calls pass none (the request log shows them).


async def _audit(
    conn: Any, actor: str | None, action: str, client_id: int, details: dict[str, Any], now: datetime
) -> None:
    if actor is not None:
        await clients_repo.record_admin_action(
            conn, actor=actor, action=action, subject=f"client:{client_id}", details=details, now=now
        )


async def create(
    svc: Services, client: ClientPrincipal, body: dict[str, Any], *, actor: str | None = None
) -> dict[str, Any]:
    _unknown_fields(body, CREATE_FIELDS)
    url = await check_url(svc, body.get("url"))
    chosen = check_events(body.get("events"))
    description = check_description(body.get("description"))
    secret = new_signing_secret()
    now = svc.clock.now()
    async with svc.db.write() as conn:
        await repo.lock_client(conn, client.client_id)
        if await repo.count_endpoints(conn, client.client_id) >= MAX_ENDPOINTS:
            raise Refused(ErrorCode.WEBHOOK_ENDPOINT_LIMIT)
        row = await repo.insert_endpoint(
            conn,
            {
                "public_id": f"we_{os.urandom(12).hex()}",
                "client_id": client.client_id,
                "url": url,
                "events": chosen,
                "description": description,
                "status": repo.ENABLED,
                "secret_enc": svc.box.seal(secret),
                "created_at": now,
                "updated_at": now,
            },
        )
        await _audit(
            conn, actor, "webhook_endpoint.create", client.client_id, {"endpoint_id": row.public_id, "url": url}, now
        )
    return {**view(row), "secret": secret}


async def list_all(svc: Services, client: ClientPrincipal) -> dict[str, Any]:
    async with svc.db.read() as conn:
        rows = await repo.list_endpoints(conn, client.client_id)
    return {"data": [view(row) for row in rows]}


async def get(svc: Services, client: ClientPrincipal, public_id: str) -> dict[str, Any]:
    async with svc.db.read() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id)
    if row is None:
        raise not_found()
    return view(row)


async def patch(
    svc: Services, client: ClientPrincipal, public_id: str, body: dict[str, Any], *, actor: str | None = None
) -> dict[str, Any]:
    _unknown_fields(body, PATCH_FIELDS)
    changes: dict[str, Any] = {}
    if "url" in body:
        changes["url"] = await check_url(svc, body["url"])
    if "events" in body:
        changes["events"] = check_events(body["events"])
    if "description" in body:
        changes["description"] = check_description(body["description"])
    if "status" in body:
        changes["status"] = check_status(body["status"])
    now = svc.clock.now()
    async with svc.db.write() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id, for_update=True)
        if row is None:
            raise not_found()
        if changes.get("status") == repo.ENABLED:
            changes["disabled_reason"] = None
        elif changes.get("status") == repo.DISABLED and row.status == repo.ENABLED:
            changes["disabled_reason"] = "disabled by the client"
            await repo.fail_pending(conn, row.id, reason="endpoint disabled by the client", now=now)
        row = await repo.update_endpoint(conn, row.id, {**changes, "updated_at": now})
        action = {repo.ENABLED: "webhook_endpoint.enable", repo.DISABLED: "webhook_endpoint.disable"}.get(
            changes.get("status", ""), "webhook_endpoint.update"
        )
        shown = {name: value for name, value in changes.items() if name in PATCH_FIELDS}
        await _audit(conn, actor, action, client.client_id, {"endpoint_id": public_id, **shown}, now)
    return view(row)


async def delete(svc: Services, client: ClientPrincipal, public_id: str) -> None:
    now = svc.clock.now()
    async with svc.db.write() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id, for_update=True)
        if row is None:
            raise not_found()
        await repo.fail_pending(conn, row.id, reason="endpoint deleted", now=now)
        await repo.update_endpoint(conn, row.id, {"deleted_at": now, "updated_at": now})


async def rotate_secret(
    svc: Services, client: ClientPrincipal, public_id: str, *, actor: str | None = None
) -> dict[str, Any]:
    """A new secret; the one it replaces keeps signing beside it for 24 h (both signatures, space
    separated), so the receiver can switch without losing a delivery. Rotating again within those
    24 h keeps only the secret being replaced."""
    secret = new_signing_secret()
    now = svc.clock.now()
    async with svc.db.write() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id, for_update=True)
        if row is None:
            raise not_found()
        await repo.update_endpoint(
            conn,
            row.id,
            {
                "secret_enc": svc.box.seal(secret),
                "old_secret_enc": row.secret_enc,
                "old_secret_until": now + ROTATION_OVERLAP,
                "updated_at": now,
            },
        )
        await _audit(conn, actor, "webhook_endpoint.rotate_secret", client.client_id, {"endpoint_id": public_id}, now)
    return {"secret": secret}


async def ping(svc: Services, client: ClientPrincipal, public_id: str, *, actor: str | None = None) -> dict[str, Any]:
    """A ``ping`` event for this endpoint only, due now (a disabled endpoint gets it once enabled,
    within 24 h)."""
    now = svc.clock.now()
    event_id = events.new_event_id()
    async with svc.db.write() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id)
        if row is None:
            raise not_found()
        body = events.body(event_id, events.EventType.PING, now, {"endpoint_id": row.public_id})
        event_pk = await events_repo.insert_event(
            conn,
            {
                "event_id": event_id,
                "client_id": client.client_id,
                "endpoint_id": row.id,
                "type": events.EventType.PING.value,
                "body": body.decode(),
                "created_at": now,
                "fanned_out_at": now,
            },
        )
        await repo.insert_deliveries(conn, [new_delivery(event_pk, row.id, now)])
        await _audit(
            conn,
            actor,
            "webhook_endpoint.test",
            client.client_id,
            {"endpoint_id": public_id, "event_id": event_id},
            now,
        )
    return {"event_id": event_id}


def new_delivery(event_pk: int, endpoint_id: int, now: datetime) -> dict[str, Any]:
    return {
        "event_pk": event_pk,
        "endpoint_id": endpoint_id,
        "kind": CLIENT_WEBHOOK,
        "status": repo.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "deadline_at": now + DELIVERY_WINDOW,
        "created_at": now,
    }


async def deliveries(
    svc: Services, client: ClientPrincipal, public_id: str, *, limit: str | None, cursor: str | None
) -> dict[str, Any]:
    size = paging.parse_limit(limit)
    purpose = f"webhook-deliveries:{public_id}"
    below = paging.decode(svc.box, purpose, client.client_id, cursor)
    async with svc.db.read() as conn:
        row = await repo.get_endpoint(conn, client.client_id, public_id)
        if row is None:
            raise not_found()
        rows = await repo.deliveries_page(conn, row.id, below_id=below, limit=size + 1)
    page = rows[:size]
    next_cursor = paging.encode(svc.box, purpose, client.client_id, page[-1].id) if len(rows) > size else None
    return {"data": [_delivery_view(r) for r in page], "next_cursor": next_cursor}


async def disable_for_operator(svc: Services, client_id: int, public_id: str, *, actor: str) -> int | None:
    """An operator turns a client's endpoint off from the console (one dead endpoint made a
    page of failing deliveries): as the client's own ``PATCH status=disabled`` does, its pending
    deliveries stop, in one transaction with the ``webhook_endpoint.disable`` audit row. Returns how
    many deliveries were stopped, or None when there is no such endpoint (or it is off already)."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        row = await repo.get_endpoint(conn, client_id, public_id, for_update=True)
        if row is None or row.status != repo.ENABLED:
            return None
        reason = f"disabled by {actor}"
        stopped = await repo.fail_pending(conn, row.id, reason=f"endpoint {reason}", now=now)
        await repo.update_endpoint(
            conn, row.id, {"status": repo.DISABLED, "disabled_reason": reason, "updated_at": now}
        )
        await clients_repo.record_admin_action(
            conn,
            actor=actor,
            action="webhook_endpoint.disable",
            subject=f"client:{client_id}",
            details={"endpoint_id": public_id, "url": row.url, "pending_stopped": stopped},
            now=now,
        )
    return stopped
