"""The agency portal over real HTTP (docs/rules/agency-portal.md): the service on loopback (the
session's ``service`` fixture), a client made through the same use case as ``transfers clients
create``, its users through ``transfers clients users create``'s, and an ``AgencyBrowser``: an httpx
client with its own cookie jar that signs in through the real form and reads each page's CSRF token.

Fixtures:
    make_agency   ``agency = await make_agency()``: a new client (wallet 1000.00 EUR) with an admin and
                  an agent (``agency.admin`` / ``agency.agent``: e-mail and password) and its API key
    signed_in     ``web = await signed_in(agency.admin)``: an AgencyBrowser signed in as that user
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import ClientFactory
from tests.servers import LiveServer
from transfers.agency.users import create_user
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

PASSWORD = "correct horse battery staple"
_numbers = itertools.count(1)
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass(frozen=True)
class User:
    user_id: int
    email: str
    password: str


@dataclass(frozen=True)
class Agency:
    client_id: int
    api_key: str
    admin: User
    agent: User


MakeAgency = Callable[..., Awaitable[Agency]]


@pytest.fixture
def make_agency(make_client: ClientFactory, db: Database, clock: ShiftedClock) -> MakeAgency:
    async def make(*, balance: str = "1000.00", currency: str = "EUR") -> Agency:
        client_id, key = await make_client(balance=balance, currency=currency)
        made: list[User] = []
        for role in ("admin", "agent"):
            email = f"{role}{next(_numbers)}-{os.getpid()}@agency-{client_id}.example"
            user = await create_user(
                db, clock, client_id=client_id, email=email, role=role, password=PASSWORD, actor="tests"
            )
            made.append(User(user.user_id, user.email, PASSWORD))
        return Agency(client_id, key, made[0], made[1])

    return make


class AgencyBrowser:
    """A person's browser without JavaScript: cookies kept, forms posted with the page's CSRF token."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.csrf = ""

    async def get(self, path: str, **kwargs: object) -> httpx.Response:
        answer = await self.http.get(path, **kwargs)  # type: ignore[arg-type]
        found = CSRF.search(answer.text)
        if found:
            self.csrf = found.group(1)
        return answer

    async def post(self, path: str, data: dict[str, str], *, csrf: bool = True) -> httpx.Response:
        body = {**data, **({"csrf_token": self.csrf} if csrf else {})}
        answer = await self.http.post(path, data=body)
        found = CSRF.search(answer.text)
        if found:
            self.csrf = found.group(1)
        return answer


SignedIn = Callable[[User], Awaitable[AgencyBrowser]]


async def sign_in(web: AgencyBrowser, email: str, password: str) -> httpx.Response:
    await web.get("/agency/login")
    return await web.post("/agency/login", {"email": email, "password": password})


@pytest.fixture
async def signed_in(service: LiveServer) -> AsyncIterator[SignedIn]:
    opened: list[httpx.AsyncClient] = []

    async def open_as(user: User) -> AgencyBrowser:
        client = httpx.AsyncClient(base_url=service.url, timeout=30)
        opened.append(client)
        web = AgencyBrowser(client)
        answer = await sign_in(web, user.email, user.password)
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == "/agency/"
        await web.get("/agency/bookings")  # a page with the session's CSRF token
        return web

    yield open_as
    for client in opened:
        await client.aclose()
