"""The headers every answer carries (docs/operations/security.md), over real HTTP on the session's app:
``nosniff`` on every JSON answer and page, a Content-Security-Policy with ``frame-ancestors 'none'`` on
every page, ``no-referrer`` and ``no-store`` on the capability URLs' answers (``/t/``, ``/d/``), and
``no-store`` on the answers that show a secret once."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ClientFactory, bearer

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
FAKE_TOKEN = "AbCdEfGhIjKlMnOpQrStUv"  # the shape of a token, opening nothing


def nosniff(answer: httpx.Response) -> bool:
    return answer.headers.get_list("x-content-type-options") == ["nosniff"]


async def test_every_json_answer_says_nosniff(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    answers = [
        await http.get("/healthz"),
        await http.get("/api/v1/booking-api/nothing-here"),  # a 404 of the router
        await http.post("/api/v1/booking-api/search", json={}),  # a direct route, refused: 401
        await http.post("/api/v1/booking-api/search", json={}, headers=bearer(key)),  # a direct route: 422
        await http.get("/api/v1/booking-api/booking", params={"reservation_no": "TR-0000000000"}, headers=bearer(key)),
        await http.post("/api/v1/booking-api/search", content=b"x" * 70_000, headers=bearer(key)),  # 413
        await http.get("/openapi.json"),
    ]
    assert [a.status_code for a in answers] == [200, 404, 401, 422, answers[4].status_code, 413, 200]
    assert all(nosniff(a) for a in answers), [dict(a.headers) for a in answers if not nosniff(a)]


@pytest.mark.parametrize(
    "path", ["/", "/docs", "/console/login", "/partner/login", "/agency/login", "/console/no-such-page"]
)
async def test_every_page_has_a_policy_against_framing(http: httpx.AsyncClient, path: str) -> None:
    answer = await http.get(path)
    assert answer.headers["content-type"].startswith("text/html")
    policy = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert "'unsafe-inline'" not in policy.split("style-src")[0]  # never for scripts
    assert nosniff(answer)
    if path.startswith(("/console", "/partner", "/agency")):  # where new keys and secrets are shown once
        assert answer.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/t/{FAKE_TOKEN}"),
        ("GET", f"/t/{FAKE_TOKEN}.json"),
        ("GET", f"/d/{FAKE_TOKEN}"),
        ("POST", f"/d/{FAKE_TOKEN}/events"),
        ("POST", f"/d/{FAKE_TOKEN}/positions"),
        ("GET", f"/m/{FAKE_TOKEN}"),
        ("GET", f"/r/{FAKE_TOKEN}"),
    ],
)
async def test_capability_urls_send_no_referrer_and_are_never_stored(
    http: httpx.AsyncClient, method: str, path: str
) -> None:
    answer = await http.request(method, path, json={"lat": 1, "lng": 1} if path.endswith("positions") else None)
    assert answer.status_code == 404
    assert answer.headers.get_list("referrer-policy") == ["no-referrer"]
    assert answer.headers.get_list("cache-control") == ["no-store"]
    assert nosniff(answer)


async def test_a_secret_shown_once_is_never_stored(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    created = await http.post(ENDPOINTS, json={"url": "http://127.0.0.1:9/hook", "events": ["*"]}, headers=bearer(key))
    assert created.status_code == 201, created.text
    assert created.json()["secret"] and created.headers["cache-control"] == "no-store"
    rotated = await http.post(f"{ENDPOINTS}/{created.json()['id']}/rotate-secret", headers=bearer(key))
    assert rotated.status_code == 200 and rotated.headers["cache-control"] == "no-store"
    listed = await http.get(ENDPOINTS, headers=bearer(key))  # no secret in it: an ordinary answer
    assert "secret" not in listed.text and "cache-control" not in listed.headers
