"""Bearer authentication of the booking API (docs/rules/accounts.md#authentication, docs/rules/accounts.md#api-keys,
docs/rules/errors.md#shapes) on the real HTTP stack.

Revocation and suspension bound: a verified key is cached per process for ``auth_cache_seconds``
(1 s in the test settings, the product default). A key never verified before it is revoked is
refused at once; a key verified just before is refused at the latest ``auth_cache_seconds`` later.
Both cases are tested below.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from decimal import Decimal
from importlib import resources
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from tests.conftest import ClientFactory, bearer
from tests.servers import LiveServer
from transfers.auth.keys import issue_key, parse_key
from transfers.auth.service import AuthFailure
from transfers.clients import service as client_service
from transfers.clients.models import ClientStatus
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.partners import repository as partners_repo
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner

REASONS = "/api/v1/booking-api/cancellation-reasons"
UNAUTHENTICATED = {"status": "Error", "code": "UNAUTHENTICATED", "message": "A valid bearer API key is required."}
SUSPENDED = {"status": "Error", "code": "CLIENT_SUSPENDED", "message": "This client account is suspended."}


def prefix_of(key: str) -> str:
    parsed = parse_key(key)
    assert parsed is not None
    return parsed[1]


async def assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.json() == UNAUTHENTICATED
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers.get("x-request-id")


async def wait_out_the_cache(settings: Settings) -> None:
    await asyncio.sleep(settings.auth_cache_seconds + 0.2)


async def test_valid_key_is_accepted(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 200
    assert isinstance(response.json(), list) and response.json()


async def test_missing_key(http: httpx.AsyncClient) -> None:
    await assert_401(await http.get(REASONS))
    await assert_401(await http.get(REASONS, headers={"Authorization": ""}))


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Token {key}",
        "Basic {key}",
        "{key}",
        "Bearer{key}",
        "Bearer\t{key}",
        "Bearer {key} extra",
        "Bearer {key},Bearer {key}",
        "Bearer {key_upper}",
        "Bearer {key_no_kind}",
        "Bearer {key_short}",
        "Bearer {key_long}",
        "Bearer {key_bad_prefix}",
    ],
)
async def test_malformed_keys(http: httpx.AsyncClient, make_client: ClientFactory, header: str) -> None:
    _, key = await make_client()
    value = header.format(
        key=key,
        key_upper=key.upper(),
        key_no_kind=key[3:],
        key_short=key[:-1],
        key_long=key + "A",
        key_bad_prefix="tk_" + "z" * 12 + key[15:],
    )
    await assert_401(await http.get(REASONS, headers={"Authorization": value}))


async def test_unknown_keys(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    never_issued = issue_key("tk").key  # well-formed, unknown prefix
    await assert_401(await http.get(REASONS, headers=bearer(never_issued)))
    # Known prefix, wrong secret (the hash comparison, not the prefix, decides).
    forged = f"{prefix_of(key)}_{secrets.token_urlsafe(32)}"
    assert forged != key and len(forged) == len(key)
    await assert_401(await http.get(REASONS, headers=bearer(forged)))
    flipped = key[:-1] + ("A" if key[-1] != "A" else "B")
    await assert_401(await http.get(REASONS, headers=bearer(flipped)))
    # The real key still works after all those failures (failures are not cached against it).
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
async def test_bearer_scheme_is_case_insensitive(
    http: httpx.AsyncClient, make_client: ClientFactory, scheme: str
) -> None:
    _, key = await make_client()
    response = await http.get(REASONS, headers={"Authorization": f"{scheme} {key}"})
    assert response.status_code == 200, response.text


async def test_extra_spaces_around_the_token_are_tolerated(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    assert (await http.get(REASONS, headers={"Authorization": f"Bearer   {key}"})).status_code == 200


async def test_key_is_only_read_from_the_authorization_header(
    http: httpx.AsyncClient, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    for params in (
        {"api_key": key},
        {"access_token": key},
        {"key": key},
        {"token": key},
        {"Authorization": f"Bearer {key}"},
    ):
        await assert_401(await http.get(REASONS, params=params))
    for headers in (
        {"X-API-Key": key},
        {"Api-Key": key},
        {"X-Authorization": f"Bearer {key}"},
        {"Cookie": f"api_key={key}; Authorization=Bearer {key}"},
    ):
        await assert_401(await http.get(REASONS, headers=headers))


async def test_revoked_key_never_used_is_refused_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    await client_service.revoke_key(db, clock, prefix_of(key), actor="tests")
    await assert_401(await http.get(REASONS, headers=bearer(key)))
    # Revoking again is harmless and it stays revoked.
    await client_service.revoke_key(db, clock, prefix_of(key), actor="tests")
    await assert_401(await http.get(REASONS, headers=bearer(key)))


async def test_revoked_key_in_use_is_refused_within_the_cache_bound(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, settings: Settings
) -> None:
    _, key = await make_client()
    _, other_key = await make_client()
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200  # now cached
    await client_service.revoke_key(db, clock, prefix_of(key), actor="tests")
    revoked_at = time.monotonic()
    while True:  # refused at the latest auth_cache_seconds after the revocation
        response = await http.get(REASONS, headers=bearer(key))
        if response.status_code == 401:
            break
        assert response.status_code == 200
        assert time.monotonic() - revoked_at <= settings.auth_cache_seconds + 0.5, "revocation not applied in time"
        await asyncio.sleep(0.05)
    await assert_401(response)
    await wait_out_the_cache(settings)
    await assert_401(await http.get(REASONS, headers=bearer(key)))
    # Another client's key is untouched by the revocation.
    assert (await http.get(REASONS, headers=bearer(other_key))).status_code == 200


async def test_revoking_one_key_leaves_the_clients_other_keys_working(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, first = await make_client()
    second = (await client_service.issue_client_key(db, clock, client_id, actor="tests")).api_key
    await client_service.revoke_key(db, clock, prefix_of(first), actor="tests")
    await assert_401(await http.get(REASONS, headers=bearer(first)))
    assert (await http.get(REASONS, headers=bearer(second))).status_code == 200


async def test_suspended_client_gets_403_and_reactivation_restores_access(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, settings: Settings
) -> None:
    client_id, key = await make_client()
    _, unused_key_client = await make_client()
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200  # cached as active
    await client_service.set_status(db, clock, client_id, ClientStatus.SUSPENDED, actor="tests")
    await wait_out_the_cache(settings)
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 403
    assert response.json() == SUSPENDED
    # A bad key of a suspended client is still 401 (suspension is only told to a valid key holder).
    await assert_401(await http.get(REASONS, headers=bearer(key[:-1] + ("A" if key[-1] != "A" else "B"))))
    await client_service.set_status(db, clock, client_id, ClientStatus.ACTIVE, actor="tests")
    await wait_out_the_cache(settings)
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
    assert (await http.get(REASONS, headers=bearer(unused_key_client))).status_code == 200


async def test_suspension_of_a_key_never_used_applies_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client()
    await client_service.set_status(db, clock, client_id, ClientStatus.SUSPENDED, actor="tests")
    response = await http.get(REASONS, headers=bearer(key))
    assert (response.status_code, response.json()) == (403, SUSPENDED)


async def test_revoked_key_of_a_suspended_client_is_401(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client()
    await client_service.set_status(db, clock, client_id, ClientStatus.SUSPENDED, actor="tests")
    await client_service.revoke_key(db, clock, prefix_of(key), actor="tests")
    await assert_401(await http.get(REASONS, headers=bearer(key)))


async def test_partner_key_is_not_a_client_key(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    service: LiveServer,
    settings: Settings,
) -> None:
    partner = await register_partner(
        db,
        clock,
        SecretBox(settings.secret_key),
        name="auth-test partner",
        base_url="http://127.0.0.1:9",
        airports=("ZZZ",),
        markup_percent=Decimal("0"),
        allow_private=True,
        actor="tests",
    )
    try:
        auth = service.app.state.services.auth
        # A genuine, enabled partner key: the reverse API would accept it ...
        assert (await auth.partner(f"Bearer {partner.api_key}")).partner_id == partner.partner_id
        # ... but the booking API refuses it, as a header and in any disguise.
        await assert_401(await http.get(REASONS, headers=bearer(partner.api_key)))
        await assert_401(await http.get(REASONS, headers=bearer("tk" + partner.api_key[2:])))
        # And a client key is no partner key.
        _, client_key = await make_client()
        with pytest.raises(AuthFailure):
            await auth.partner(f"Bearer {client_key}")
    finally:
        async with db.write() as conn:
            await partners_repo.set_status(conn, partner.partner_id, "disabled")


@pytest.mark.parametrize(
    "value",
    [
        "Bearer tk_é_ü€😀".encode(),
        "Bearer 🔑🔑🔑".encode(),
        "Bärer {key}".encode(),
        b"Bearer \xff\xfe garbage",
        b"Bearer tk_0123456789ab_" + bytes(range(0x80, 0xAB)),
        "Bearer {key}\u00e9".encode("latin-1"),
    ],
)
async def test_non_ascii_authorization_is_401_not_500(
    http: httpx.AsyncClient, make_client: ClientFactory, value: bytes
) -> None:
    _, key = await make_client()
    value = value.replace(b"{key}", key.encode())
    await assert_401(await http.get(REASONS, headers={"Authorization": value}))


@pytest.mark.parametrize("length", [256, 8_192, 65_536])
async def test_very_long_authorization_is_401_not_500(
    http: httpx.AsyncClient, make_client: ClientFactory, length: int
) -> None:
    _, key = await make_client()
    await assert_401(await http.get(REASONS, headers={"Authorization": "Bearer " + "A" * length}))
    await assert_401(await http.get(REASONS, headers={"Authorization": f"Bearer {key}" + "A" * length}))
    await assert_401(await http.get(REASONS, headers={"Authorization": "Bearer tk_0123456789ab_" + "A" * length}))


async def test_public_reference_data_ignores_credentials(http: httpx.AsyncClient) -> None:
    for headers in ({}, {"Authorization": "Bearer garbage"}, {"Authorization": "Basic Zm9vOmJhcg=="}):
        response = await http.get("/api/public/car/type", headers=headers)
        assert response.status_code == 200, headers
        assert response.json()["data"]


async def test_auth_failures_do_not_reveal_which_check_failed(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    """Missing, malformed, unknown, wrong-secret and revoked keys all get the same answer."""
    _, key = await make_client()
    _, revoked = await make_client()
    await client_service.revoke_key(db, clock, prefix_of(revoked), actor="tests")
    bodies = set()
    for headers in (
        {},
        {"Authorization": "Bearer nope"},
        bearer(issue_key("tk").key),
        bearer(key[:-1] + ("A" if key[-1] != "A" else "B")),
        bearer(revoked),
    ):
        response = await http.get(REASONS, headers=headers)
        assert response.status_code == 401
        bodies.add(response.content)
    assert len(bodies) == 1


# ---- the reverse API (partners) -------------------------------------------------------------

PARTNER_UNAUTHENTICATED = {
    "status": "Error",
    "code": "UNAUTHENTICATED",
    "message": "A valid partner bearer API key is required.",
}
REVERSE_INFO = "/api/v1/reverse/booking/info/TB-ZZZZZZZZZZ"
REVERSE_UPDATE = "/api/v1/reverse/booking/update"


def _coded_error_schema() -> Any:
    """The partner document's schema of a 401, so the published shape and the answer are one."""
    doc = yaml.safe_load(resources.files("transfers").joinpath("openapi/partner.yaml").read_text())
    response = doc["paths"][REVERSE_UPDATE]["put"]["responses"]["401"]["$ref"].rsplit("/", 1)[-1]
    schema_ref = doc["components"]["responses"][response]["content"]["application/json"]["schema"]["$ref"]
    return doc["components"]["schemas"][schema_ref.rsplit("/", 1)[-1]]


async def test_reverse_api_refusals_carry_the_string_code(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    settings: Settings,
) -> None:
    """docs/rules/errors.md#shapes on every path: missing, garbled, unknown, revoked, a client's and a disabled
    partner's key all answer 401 UNAUTHENTICATED with a code, on both reverse-API operations."""
    box = SecretBox(settings.secret_key)

    async def partner(name: str) -> tuple[int, str]:
        registered = await register_partner(
            db,
            clock,
            box,
            name=name,
            base_url="http://127.0.0.1:9",
            airports=("ZZZ",),
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="tests",
        )
        return registered.partner_id, registered.api_key

    valid_id, valid = await partner("reverse-auth valid")
    revoked_id, revoked = await partner("reverse-auth revoked")
    disabled_id, disabled = await partner("reverse-auth disabled")
    try:
        await client_service.revoke_key(db, clock, prefix_of(revoked), actor="tests")
        async with db.write() as conn:
            await partners_repo.set_status(conn, disabled_id, "disabled")
        _, client_key = await make_client()
        schema = _coded_error_schema()
        for headers in (
            {},
            {"Authorization": "Bearer garbage"},
            {"Authorization": "Bearer"},
            bearer(issue_key("pk").key),
            bearer(valid[:-1] + ("A" if valid[-1] != "A" else "B")),
            bearer(revoked),
            bearer(disabled),
            bearer(client_key),
        ):
            for response in (
                await http.get(REVERSE_INFO, headers=headers),
                await http.put(
                    REVERSE_UPDATE, headers=headers, json={"reservation_no": "TB-ZZZZZZZZZZ", "status": "CANCELLED"}
                ),
            ):
                assert (response.status_code, response.json()) == (401, PARTNER_UNAUTHENTICATED), headers
                assert response.headers["www-authenticate"].startswith("Bearer")
                jsonschema.validate(response.json(), schema)
        # A body that is no JSON object is docs/rules/errors.md#shapes's 400 MALFORMED_JSON, with its code, here too.
        malformed = await http.put(REVERSE_UPDATE, headers=bearer(valid), content=b"[1]")
        assert malformed.status_code == 400 and malformed.json()["code"] == "MALFORMED_JSON"
        # The reverse API's own shapes are untouched: 404 (docs/rules/errors.md#get-codes) and 422
        # (docs/rules/partners.md#reverse-api).
        missing = await http.get(REVERSE_INFO, headers=bearer(valid))
        assert (missing.status_code, missing.json()) == (
            404,
            {"status": "Error", "message": "Booking not found", "data": None, "error_details": None},
        )
        refused = await http.put(
            REVERSE_UPDATE, headers=bearer(valid), json={"reservation_no": "TB-ZZZZZZZZZZ", "status": "COMPLETED"}
        )
        assert refused.status_code == 422 and set(refused.json()) == {"status", "message"}
    finally:
        async with db.write() as conn:
            for partner_id in (valid_id, revoked_id):
                await partners_repo.set_status(conn, partner_id, "disabled")
