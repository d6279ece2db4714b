"""Clients' webhooks cannot reach inside (docs/rules/webhooks.md#private-addresses), over real HTTP on
both databases: every spelling of an inside address refused at creation and on a URL change, through
the API and the agency portal's form; names resolved (by a resolver the test controls: no real DNS)
and refused when any address is inside; at send time a literal inside address, or a name that turned
inside after creation, is refused without a connection and logged in words; the partner flag has no
say; outcomes in the delivery log are words (docs/rules/webhooks.md#delivery-log)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agency.conftest import PASSWORD, AgencyBrowser, sign_in
from tests.conftest import ClientFactory, bearer, make_settings
from tests.servers import LiveServer, free_port
from tests.webhook_receiver import Receiver
from transfers.agency.users import create_user
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.deliveries import webhook_dispatcher
from transfers.partners import ssrf
from transfers.services import Services

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
PUBLIC = "93.184.215.14"  # an address the guard lets through (never connected to here)

# Every way of writing an address inside, as a resolver reads it.
INSIDE = [
    "http://127.0.0.1/hook",
    "http://127.0.0.1./hook",
    "http://127.1/hook",
    "http://[::1]/hook",
    "http://0.0.0.0/hook",
    "http://[::]/hook",
    "http://localhost/hook",
    "http://localhost./hook",
    "http://LOCALHOST:8000/hook",
    "http://hooks.localhost/hook",
    "http://2130706433/hook",
    "http://0177.0.0.1/hook",
    "http://017700000001/hook",
    "http://0x7f000001/hook",
    "http://0x7f.0.0.1/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:7f00:1]/hook",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[fe80::1]/hook",
    "http://10.0.0.1/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",
    "http://[fd00::1]/hook",
    "http://224.0.0.1/hook",
    "http://[ff02::1]/hook",
    "https://127.0.0.1:8443/hook",
]


class Names:
    """The resolver the guard asks (``Services.webhook_resolver``): answers from ``table``, which a test
    changes between creation and send, like a DNS record that changed."""

    def __init__(self) -> None:
        self.table: dict[str, list[str]] = {}
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return self.table[host]


@dataclasses.dataclass
class Guarded:
    server: LiveServer
    http: httpx.AsyncClient
    svc: Services
    names: Names


@pytest.fixture
async def guarded(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[Guarded]:
    """The service with the webhooks' guard on (the default everywhere). The partner flag stays on, as the
    test settings have it: it has no say over webhooks."""
    settings = make_settings(database_url, workdir, allow_private_webhook_urls=False)
    assert settings.private_partner_urls_allowed and not settings.private_webhook_urls_allowed
    app = create_app(settings, clock=clock, configure_logs=False)
    svc: Services = app.state.services
    names = Names()
    svc.webhook_resolver = names
    server = await LiveServer(app).start()
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        yield Guarded(server, http, svc, names)
    await server.stop()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    server = await LiveServer(made.app()).start()
    made.url = server.url
    yield made
    await server.stop()


async def agency_admin(
    make_client: ClientFactory, db: Database, clock: ShiftedClock, site: str
) -> tuple[str, AgencyBrowser, httpx.AsyncClient]:
    """A client with an admin signed in to the agency portal at ``site``: its API key, the browser, its HTTP."""
    client_id, key = await make_client()
    email = f"admin-{client_id}@agency-{client_id}.example"
    await create_user(db, clock, client_id=client_id, email=email, role="admin", password=PASSWORD, actor="tests")
    http = httpx.AsyncClient(base_url=site, timeout=30)
    admin = AgencyBrowser(http)
    assert (await sign_in(admin, email, PASSWORD)).status_code == 303
    return key, admin, http


async def create(http: httpx.AsyncClient, key: str, url: str) -> httpx.Response:
    return await http.post(ENDPOINTS, json={"url": url, "events": ["*"]}, headers=bearer(key))


async def log_of(http: httpx.AsyncClient, key: str, endpoint_id: str) -> list[dict[str, Any]]:
    answer = await http.get(f"{ENDPOINTS}/{endpoint_id}/deliveries", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    entries: list[dict[str, Any]] = answer.json()["data"]
    return entries


async def ping_and_send(svc: Services, http: httpx.AsyncClient, key: str, endpoint_id: str) -> dict[str, Any]:
    """A ``ping`` for the endpoint, sent once by a dispatcher built from ``svc`` (its settings, its resolver)."""
    pinged = await http.post(f"{ENDPOINTS}/{endpoint_id}/test", headers=bearer(key))
    assert pinged.status_code == 202, pinged.text
    dispatcher = webhook_dispatcher(svc)
    try:
        await dispatcher.run_once()
    finally:
        await dispatcher.aclose()
    (entry,) = [e for e in await log_of(http, key, endpoint_id) if e["event_id"] == pinged.json()["event_id"]]
    return entry


async def test_every_spelling_of_an_inside_address_is_refused_at_creation_and_on_change(
    guarded: Guarded, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    guarded.names.table["hooks.example.test"] = [PUBLIC]
    made = await create(guarded.http, key, "https://hooks.example.test/transfers")
    assert made.status_code == 201, made.text
    endpoint_id = made.json()["id"]
    let_through = []
    for url in INSIDE:
        refused = await create(guarded.http, key, url)
        if refused.status_code != 422 or refused.json()["code"] != "INVALID_WEBHOOK_URL":
            let_through.append((url, refused.status_code, refused.text))
        changed = await guarded.http.patch(f"{ENDPOINTS}/{endpoint_id}", json={"url": url}, headers=bearer(key))
        if changed.status_code != 422 or changed.json()["code"] != "INVALID_WEBHOOK_URL":
            let_through.append((url, changed.status_code, changed.text))
    assert let_through == []
    assert "public address" in refused.json()["message"]
    listed = (await guarded.http.get(ENDPOINTS, headers=bearer(key))).json()["data"]
    assert [(e["id"], e["url"]) for e in listed] == [(endpoint_id, "https://hooks.example.test/transfers")]
    assert guarded.names.asked == ["hooks.example.test"]  # literals and local names are judged without DNS


@pytest.mark.parametrize(
    ("answers", "refused"),
    [
        ([PUBLIC], False),
        (["10.0.0.7"], True),
        (["127.0.0.1"], True),
        ([PUBLIC, "192.168.0.3"], True),  # one address inside is enough
        (["::1"], True),
        (["::ffff:169.254.169.254"], True),
        (["fe80::1%eth0"], True),
        ([], True),  # resolves to nothing
        (None, True),  # does not resolve
    ],
)
async def test_a_name_is_resolved_and_refused_when_any_address_is_inside(
    guarded: Guarded, make_client: ClientFactory, answers: list[str] | None, refused: bool
) -> None:
    _, key = await make_client()
    if answers is not None:
        guarded.names.table["name.example.test"] = answers
    answer = await create(guarded.http, key, "https://name.example.test/hook")
    if refused:
        assert answer.status_code == 422 and answer.json()["code"] == "INVALID_WEBHOOK_URL", answer.text
        assert PUBLIC not in answer.text and "127.0.0.1" not in answer.text  # no address told back
    else:
        assert answer.status_code == 201, answer.text


async def test_the_agency_portals_form_refuses_them_with_the_apis_message(
    guarded: Guarded, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    key, admin, browser = await agency_admin(make_client, db, clock, guarded.server.url)
    try:
        await admin.get("/agency/developers/endpoints/new")
        for url in ("http://0177.0.0.1:8000/hook", "http://[::1]/hook", "http://169.254.169.254/"):
            api = (await create(guarded.http, key, url)).json()
            refused = await admin.post("/agency/developers/endpoints", {"url": url, "events": "*"})
            assert refused.status_code == 422, refused.text
            assert 'id="url-error"' in refused.text and api["message"] in refused.text
    finally:
        await browser.aclose()
    assert (await guarded.http.get(ENDPOINTS, headers=bearer(key))).json() == {"data": []}  # nothing written


async def test_a_literal_inside_address_is_refused_at_send_without_a_connection(
    guarded: Guarded, http: httpx.AsyncClient, make_client: ClientFactory, receiver: Receiver
) -> None:
    """An endpoint on loopback (created where the guard is lifted, as the test settings have it) is not
    called once the guard is on: checked at every send, not only at creation."""
    _, key = await make_client()
    made = await create(http, key, receiver.hook_url)
    assert made.status_code == 201, made.text
    entry = await ping_and_send(guarded.svc, guarded.http, key, made.json()["id"])
    assert entry["status"] == "pending" and entry["attempts"] == 1  # tried again later, as any failure
    assert entry["last_outcome"] == "refused: private address" and entry["last_http_status"] is None
    assert receiver.received == []
    await http.delete(f"{ENDPOINTS}/{made.json()['id']}", headers=bearer(key))


async def test_a_name_that_turned_inside_after_creation_is_refused_at_send(
    guarded: Guarded, make_client: ClientFactory, receiver: Receiver
) -> None:
    _, key = await make_client()
    guarded.names.table["rebind.example.test"] = [PUBLIC]
    port = receiver.url.rsplit(":", 1)[1]
    made = await create(guarded.http, key, f"http://rebind.example.test:{port}/hook")
    assert made.status_code == 201, made.text
    guarded.names.table["rebind.example.test"] = ["127.0.0.1"]  # the record now points at the receiver
    entry = await ping_and_send(guarded.svc, guarded.http, key, made.json()["id"])
    assert entry["last_outcome"] == "refused: private address"
    assert receiver.received == []
    assert guarded.names.asked.count("rebind.example.test") == 2  # at creation, and again at the send
    await guarded.http.delete(f"{ENDPOINTS}/{made.json()['id']}", headers=bearer(key))


async def test_the_send_connects_to_the_address_it_checked(
    guarded: Guarded, make_client: ClientFactory, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 127.0.0.1 counted as public for this test only, a name that exists in no DNS reaches the
    receiver through the resolver's checked answer: the connection goes to that address, the name is only
    the Host header."""
    _, key = await make_client()
    original = ssrf.blocked_reason
    monkeypatch.setattr(
        ssrf, "blocked_reason", lambda address: None if str(address) == "127.0.0.1" else original(address)
    )
    guarded.names.table["pinned.example.test"] = ["127.0.0.1"]
    port = receiver.url.rsplit(":", 1)[1]
    made = await create(guarded.http, key, f"http://pinned.example.test:{port}/hook")
    assert made.status_code == 201, made.text
    receiver.secrets.append(made.json()["secret"])
    entry = await ping_and_send(guarded.svc, guarded.http, key, made.json()["id"])
    assert entry["last_outcome"] == "delivered" and entry["status"] == "delivered"
    (delivery,) = receiver.received
    assert delivery.headers["host"] == f"pinned.example.test:{port}" and delivery.signed_by


async def test_outcomes_are_told_in_words(
    http: httpx.AsyncClient, service: LiveServer, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    """The test settings lift the guard (receivers on loopback): delivered, an HTTP status, a closed port
    and a receiver that never answers, each in words in the API's log and the agency portal's events."""
    svc: Services = service.app.state.services
    quick = dataclasses.replace(svc, settings=svc.settings.model_copy(update={"webhook_timeout_seconds": 0.5}))
    key, admin, browser = await agency_admin(make_client, db, clock, service.url)
    seen: dict[str, str] = {}
    servers: list[LiveServer] = []
    try:
        for name, options in {"ok": {}, "down": {"status": 503}, "hang": {"hang": True}}.items():
            made_receiver = Receiver(**options)  # type: ignore[arg-type]
            server = await LiveServer(made_receiver.app()).start()
            servers.append(server)
            made_receiver.url = server.url
            made = await create(http, key, made_receiver.hook_url)
            seen[name] = (await ping_and_send(quick, http, key, made.json()["id"]))["last_outcome"]
        closed = await create(http, key, f"http://127.0.0.1:{free_port()}/hook")
        seen["closed"] = (await ping_and_send(quick, http, key, closed.json()["id"]))["last_outcome"]
    finally:
        await asyncio.gather(*(server.stop() for server in servers))
    assert seen == {
        "ok": "delivered",
        "down": "HTTP 503",
        "hang": "no answer within 0.5 s",
        "closed": "no answer: could not connect",
    }
    try:
        page = (await admin.get("/agency/developers/events")).text
        for endpoint in (await http.get(ENDPOINTS, headers=bearer(key))).json()["data"]:  # each endpoint's log
            page += (await admin.get(f"/agency/developers/endpoints/{endpoint['id']}")).text
    finally:
        await browser.aclose()
        for endpoint in (await http.get(ENDPOINTS, headers=bearer(key))).json()["data"]:
            await http.delete(f"{ENDPOINTS}/{endpoint['id']}", headers=bearer(key))  # no retries left pending
    for words in seen.values():
        assert page.count(words) >= 2, words  # on the events page and on the endpoint's own
    for name in ("ClientConnectorError", "ConnectError", "TimeoutError", "ServerTimeoutError", "OSError"):
        assert name not in page
