"""The webhook-endpoint API (docs/rules/webhooks.md): create with the secret once, list, get, patch, delete,
rotate, the delivery log; scoping (another client's endpoint is a missing one); every bad input
with its code and nothing written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, bearer, make_settings
from tests.servers import LiveServer
from transfers.api import client_schemas as cs
from transfers.app import create_app
from transfers.client_events.events import EventType
from transfers.clock import ShiftedClock

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
HOOK = "https://hooks.example.com/transfers"


async def create(http: httpx.AsyncClient, key: str, **body: Any) -> httpx.Response:
    return await http.post(ENDPOINTS, json={"url": HOOK, "events": ["*"], **body}, headers=bearer(key))


async def listed(http: httpx.AsyncClient, key: str) -> list[dict[str, Any]]:
    answer = await http.get(ENDPOINTS, headers=bearer(key))
    assert answer.status_code == 200
    cs.WebhookEndpointList.model_validate(answer.json())
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


async def test_create_shows_the_secret_once_and_the_endpoint_is_managed_by_its_client(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    created = await create(http, key, events=["booking.created", "booking.status_changed"], description="ops")
    assert created.status_code == 201, created.text
    body = created.json()
    cs.WebhookEndpointCreated.model_validate(body)
    assert body["id"].startswith("we_") and body["secret"].startswith("whsec_") and body["status"] == "enabled"
    assert body["events"] == ["booking.created", "booking.status_changed"] and body["description"] == "ops"
    one = await http.get(f"{ENDPOINTS}/{body['id']}", headers=bearer(key))
    assert one.status_code == 200 and "secret" not in one.json()
    assert one.json() == {k: v for k, v in body.items() if k != "secret"}
    assert [e["id"] for e in await listed(http, key)] == [body["id"]]

    patched = await http.patch(
        f"{ENDPOINTS}/{body['id']}",
        headers=bearer(key),
        json={"events": ["*"], "status": "disabled", "description": None},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["events"] == ["*"] and patched.json()["status"] == "disabled"
    assert patched.json()["description"] is None and patched.json()["url"] == HOOK

    rotated = await http.post(f"{ENDPOINTS}/{body['id']}/rotate-secret", headers=bearer(key))
    assert rotated.status_code == 200 and rotated.json()["secret"].startswith("whsec_")
    assert rotated.json()["secret"] != body["secret"]

    log = await http.get(f"{ENDPOINTS}/{body['id']}/deliveries", headers=bearer(key))
    assert log.status_code == 200 and log.json() == {"data": [], "next_cursor": None}

    deleted = await http.delete(f"{ENDPOINTS}/{body['id']}", headers=bearer(key))
    assert deleted.status_code == 204
    assert (await http.get(f"{ENDPOINTS}/{body['id']}", headers=bearer(key))).status_code == 404
    assert await listed(http, key) == []


async def test_another_clients_endpoint_answers_exactly_like_a_missing_one(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
) -> None:
    _, mine = await make_client()
    _, theirs = await make_client()
    endpoint = (await create(http, mine)).json()["id"]
    for method, suffix, body in [
        ("GET", "", None),
        ("PATCH", "", {"description": "x"}),
        ("DELETE", "", None),
        ("POST", "/test", None),
        ("POST", "/rotate-secret", None),
        ("GET", "/deliveries", None),
    ]:
        foreign = await http.request(method, f"{ENDPOINTS}/{endpoint}{suffix}", json=body, headers=bearer(theirs))
        missing = await http.request(method, f"{ENDPOINTS}/we_0000{suffix}", json=body, headers=bearer(theirs))
        assert foreign.status_code == missing.status_code == 404, (method, suffix)
        assert foreign.json() == missing.json() and foreign.json()["code"] == "NOT_FOUND"
    assert await listed(http, theirs) == []
    assert (await http.get(f"{ENDPOINTS}/{endpoint}", headers=bearer(mine))).json()["description"] is None


async def test_the_eleventh_endpoint_is_refused(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    for n in range(10):
        assert (await create(http, key, description=f"n{n}")).status_code == 201
    eleventh = await create(http, key)
    assert eleventh.status_code == 422 and eleventh.json()["code"] == "WEBHOOK_ENDPOINT_LIMIT"
    assert len(await listed(http, key)) == 10
    first = (await listed(http, key))[0]["id"]
    assert (await http.delete(f"{ENDPOINTS}/{first}", headers=bearer(key))).status_code == 204
    assert (await create(http, key)).status_code == 201  # a deleted endpoint frees its place


BAD_CREATES = [
    ({"url": "ftp://hooks.example.com/x"}, "INVALID_WEBHOOK_URL"),
    ({"url": "javascript:alert(1)"}, "INVALID_WEBHOOK_URL"),
    ({"url": "https://"}, "INVALID_WEBHOOK_URL"),
    ({"url": "https://user:pw@hooks.example.com/"}, "INVALID_WEBHOOK_URL"),
    ({"url": "https://hooks.example.com:99999/"}, "INVALID_WEBHOOK_URL"),
    ({"url": "https://hooks.example.com/" + "a" * 2000}, "INVALID_WEBHOOK_URL"),
    ({"url": " https://hooks.example.com/"}, "INVALID_WEBHOOK_URL"),
    ({"url": "https://hooks.example.com/\n"}, "INVALID_WEBHOOK_URL"),
    ({"url": None}, "INVALID_WEBHOOK_URL"),
    ({"url": 42}, "INVALID_WEBHOOK_URL"),
    ({"url": True}, "INVALID_WEBHOOK_URL"),
    ({"url": ["https://hooks.example.com/"]}, "INVALID_WEBHOOK_URL"),
    ({"events": ["booking.exploded"]}, "INVALID_WEBHOOK_EVENT"),
    ({"events": []}, "INVALID_WEBHOOK_EVENT"),
    ({"events": "*"}, "INVALID_WEBHOOK_EVENT"),
    ({"events": None}, "INVALID_WEBHOOK_EVENT"),
    ({"events": [1]}, "INVALID_WEBHOOK_EVENT"),
    ({"events": ["*", "booking.created"]}, "INVALID_WEBHOOK_EVENT"),
    ({"events": ["BOOKING.CREATED"]}, "INVALID_WEBHOOK_EVENT"),
    ({"events": ["booking.created"] * 100}, "INVALID_WEBHOOK_EVENT"),
    ({"description": "x" * 501}, "INVALID_WEBHOOK_ENDPOINT"),
    ({"description": "x" * 100_000}, "PAYLOAD_TOO_LARGE"),
    ({"description": 5}, "INVALID_WEBHOOK_ENDPOINT"),
    ({"secret": "whsec_mine"}, "INVALID_WEBHOOK_ENDPOINT"),
]


@pytest.mark.parametrize(("change", "code"), BAD_CREATES)
async def test_bad_input_gets_its_code_and_writes_nothing(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    change: dict[str, Any],
    code: str,
) -> None:
    _, key = await make_client()
    refused = await create(http, key, **change)
    assert refused.json()["code"] == code, refused.text
    assert refused.status_code == (413 if code == "PAYLOAD_TOO_LARGE" else 422)
    assert await listed(http, key) == []
    endpoint = (await create(http, key)).json()
    if code != "PAYLOAD_TOO_LARGE":
        patched = await http.patch(f"{ENDPOINTS}/{endpoint['id']}", json=change, headers=bearer(key))
        assert patched.status_code == 422 and patched.json()["code"] == code, patched.text
        assert (await listed(http, key)) == [{k: v for k, v in endpoint.items() if k != "secret"}]


async def test_unicode_descriptions_and_malformed_bodies(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    ok = await create(http, key, description="Zürich 🚕 " + "é" * 480)
    assert ok.status_code == 201 and ok.json()["description"].startswith("Zürich 🚕")
    for raw in (b"not json", b"[1]", b"null"):
        bad = await http.post(ENDPOINTS, content=raw, headers={**bearer(key), "Content-Type": "application/json"})
        assert bad.status_code == 400 and bad.json()["code"] == "MALFORMED_JSON"
    status = await http.patch(f"{ENDPOINTS}/{ok.json()['id']}", json={"status": "paused"}, headers=bearer(key))
    assert status.status_code == 422 and status.json()["code"] == "INVALID_WEBHOOK_ENDPOINT"
    for params in ({"limit": "0"}, {"limit": "x"}):
        log = await http.get(f"{ENDPOINTS}/{ok.json()['id']}/deliveries", params=params, headers=bearer(key))
        assert log.status_code == 422 and log.json()["code"] == "INVALID_FILTER"
    log = await http.get(f"{ENDPOINTS}/{ok.json()['id']}/deliveries", params={"cursor": "abc"}, headers=bearer(key))
    assert log.status_code == 422 and log.json()["code"] == "INVALID_CURSOR"
    assert (await http.get(ENDPOINTS)).status_code == 401


@pytest.fixture
async def guarded(database_url: str, workdir: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The service with the webhooks' SSRF guard on (the default everywhere; the test settings lift it)."""
    settings = make_settings(database_url, workdir, allow_private_webhook_urls=False)
    server = await LiveServer(create_app(settings, clock=ShiftedClock(), configure_logs=False)).start()
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        yield client
    await server.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://[::ffff:127.0.0.1]/",
        "http://hooks.localhost/",
    ],
)
async def test_private_addresses_are_refused_where_the_guard_is_on(
    guarded: httpx.AsyncClient,
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    url: str,
) -> None:
    _, key = await make_client()
    refused = await guarded.post(ENDPOINTS, json={"url": url, "events": ["*"]}, headers=bearer(key))
    assert refused.status_code == 422 and refused.json()["code"] == "INVALID_WEBHOOK_URL", refused.text
    assert (await guarded.get(ENDPOINTS, headers=bearer(key))).json() == {"data": []}
    allowed = await http.post(ENDPOINTS, json={"url": url, "events": ["*"]}, headers=bearer(key))  # guard lifted
    assert allowed.status_code == 201, allowed.text


async def test_the_served_document_lists_the_endpoints_api_and_every_event(http: httpx.AsyncClient) -> None:
    doc = (await http.get("/openapi.json")).json()
    assert set(doc["webhooks"]) == {t.value for t in EventType}
    for item in doc["webhooks"].values():
        assert item["post"]["requestBody"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/WebhookEvent"
        }
    paths = doc["paths"]
    assert {"post", "get"} <= set(paths[ENDPOINTS])
    assert {"get", "patch", "delete"} <= set(paths[ENDPOINTS + "/{endpoint_id}"])
    for suffix in ("/test", "/rotate-secret", "/deliveries"):
        assert paths[ENDPOINTS + "/{endpoint_id}" + suffix]
    assert {"/api/v1/booking-api/wallet", "/api/v1/booking-api/wallet/entries"} <= set(paths)
