"""Error envelopes, request ids, health and authentication on the real HTTP stack."""

from __future__ import annotations

import httpx

from tests.conftest import ClientFactory, bearer

REASONS = "/api/v1/booking-api/cancellation-reasons"


async def test_health_and_readiness(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    assert (await http.get("/readyz")).json() == {"status": "ready"}


async def test_request_id_is_echoed_or_generated(http: httpx.AsyncClient) -> None:
    echoed = await http.get("/healthz", headers={"X-Request-ID": "agency-trace-42"})
    assert echoed.headers["x-request-id"] == "agency-trace-42"
    generated = await http.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
    assert len(generated.headers["x-request-id"]) == 32


async def test_unknown_path_and_wrong_method(http: httpx.AsyncClient) -> None:
    missing = await http.get("/api/v1/nothing-here")
    assert missing.status_code == 404
    assert missing.json() == {"status": "Error", "code": "NOT_FOUND", "message": "No such path."}
    wrong = await http.post("/healthz")
    assert wrong.status_code == 405
    assert wrong.json()["code"] == "METHOD_NOT_ALLOWED"


async def test_missing_and_bad_keys_are_401(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    for headers in (
        {},
        {"Authorization": "Bearer"},
        {"Authorization": f"Basic {key}"},
        bearer("garbage"),
        bearer(key[:-2] + "xx"),
        bearer(key + "x"),
    ):
        response = await http.get(REASONS, headers=headers)
        assert response.status_code == 401, headers
        assert response.json() == {
            "status": "Error",
            "code": "UNAUTHENTICATED",
            "message": "A valid bearer API key is required.",
        }


async def test_valid_key_reads_cancellation_reasons(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 200
    reasons = response.json()
    assert [r["position"] for r in reasons] == sorted(r["position"] for r in reasons)
    assert {"Change of plans", "Flight cancelled", "Booked by mistake", "Found another option", "Other"} <= {
        r["name"] for r in reasons
    }
    for reason in reasons:
        assert set(reason) == {"id", "name", "description", "position"}
        assert isinstance(reason["id"], int) and isinstance(reason["position"], int)
