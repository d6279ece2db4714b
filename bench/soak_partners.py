"""The soak's partners and client-webhook receiver (``bench/soak.py``), served in the soak's own
process on loopback so it can read what they recorded and change their behaviour at any moment:
three fast partners (one keeping a 25 % cancel fee, one that will hang), a slow one, a flaky one, a
hosted partner with a rate card, and a receiver that fails a share of the deliveries.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from tests.fake_partner import FakePartner, Recorded, default_vehicles
from tests.servers import LiveServer

from bench.soak_world import ROOT, SECRET_KEY
from transfers.cancellation.policy import parse_spec
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.hosted import service as hosted_service
from transfers.messages import settings_service
from transfers.messages.settings_rules import SettingsChange
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner


class SoakPartner(FakePartner):
    """A FakePartner that fails a share of its calls with 503 (``fail_rate``) and remembers the
    status it answered each call with."""

    fail_rate: float = 0.0
    answered: dict[int, int]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answered = {}
        self.rng = random.Random(hash(self.name) & 0xFFFF)

    async def _answer(self, request: Any, record: Recorded) -> Response:
        while self.mode == "hang":  # no answer while it hangs (the service gives up first), then a 503
            await asyncio.sleep(0.2)
            if self.mode != "hang":
                self.answered[id(record)] = 503
                return Response(b'{"status":"Error","message":"hung"}', status_code=503, media_type="application/json")
        if self.fail_rate and self.rng.random() < self.fail_rate:
            response = Response(b'{"status":"Error","message":"busy"}', status_code=503, media_type="application/json")
        else:
            response = await super()._answer(request, record)
        self.answered[id(record)] = response.status_code
        return response

    def ok(self, record: Recorded) -> bool:
        status = self.answered.get(id(record))
        return status is not None and 200 <= status < 300


@dataclass
class Hook:
    webhook_id: str
    type: str
    reservation_no: str | None
    sequence: int | None
    body: bytes
    status: int
    at: float


@dataclass
class FlakyReceiver:
    """A client's webhook endpoint: records every delivery and answers 500 to a share of them."""

    fail_rate: float = 0.1
    received: list[Hook] = field(default_factory=list)
    url: str = ""
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self._hook, methods=["POST"])])

    async def _hook(self, request: Request) -> Response:
        raw = await request.body()
        body = orjson.loads(raw)
        data = body.get("data") or {}
        booking = data.get("booking") or {}
        status = 500 if self.rng.random() < self.fail_rate else 200
        self.received.append(
            Hook(
                request.headers.get("webhook-id", ""),
                body.get("type", ""),
                booking.get("reservation_no") or data.get("reservation_no"),
                data.get("sequence"),
                raw,
                status,
                time.monotonic(),
            )
        )
        return Response(b"", status_code=status)


@dataclass
class PartnerSetup:
    partner: SoakPartner | None  # None: the hosted partner
    partner_id: int
    api_key: str
    airports: tuple[str, ...]


PARTNERS: dict[str, dict[str, Any]] = {
    # name: (airports, FakePartner settings, default cancellation policy, the currency it quotes in)
    "Fast A": {"airports": ("LHR",), "fake": {}, "policy": None, "currency": "EUR"},
    # every cancel keeps a 25 % fee
    "Fast B": {"airports": ("LHR",), "fake": {}, "policy": "0:25", "currency": "GBP"},
    # the one that hangs for a while; quotes in yen (no decimals)
    "Fast C": {"airports": ("LHR",), "fake": {}, "policy": None, "currency": "JPY"},
    "Slow": {"airports": ("LGW",), "fake": {"mode": "slow", "delay": 1.2}, "policy": None, "currency": "GBP"},
    "Flaky": {"airports": ("STN",), "fake": {"fail": 0.15}, "policy": None, "currency": "EUR"},
}
# Each agency's wallets (the first is its default) and whether its travellers get messages (e-mail and
# SMS, with consent, under a brand): the first holds EUR only, messages off; the second EUR and GBP,
# e-mail and SMS; the third GBP and EUR, e-mail only. More agencies repeat the pattern.
AGENCIES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("EUR",), ()),
    (("EUR", "GBP"), ("email", "sms")),
    (("GBP", "EUR"), ("email",)),
)
OPENING = Decimal("1000000")
HOSTED = "Hosted"
HOSTED_AIRPORTS = ("LCY",)


async def seed(db: Database, clients: int) -> tuple[dict[str, PartnerSetup], list[Agency], list[LiveServer]]:
    """Partners (served in this process on loopback, registered through the service's own use
    cases), the hosted partner with a rate card, and the clients with big wallets."""
    clock, box = SystemClock(), SecretBox(SECRET_KEY)
    setups: dict[str, PartnerSetup] = {}
    servers: list[LiveServer] = []
    for name, spec in PARTNERS.items():
        fake = dict(spec["fake"])
        fail = fake.pop("fail", 0.0)
        partner = SoakPartner(name=name, vehicles=quotes(spec["currency"]), **fake)
        partner.fail_rate = fail
        server = await LiveServer(partner.app()).start()
        servers.append(server)
        partner.url = server.url
        registered = await register_partner(
            db,
            clock,
            box,
            name=name,
            base_url=server.url,
            airports=spec["airports"],
            markup_percent=Decimal("10"),
            allow_private=True,
            actor="soak",
            cancellation_policy=parse_spec(spec["policy"]) if spec["policy"] else None,
        )
        partner.signing_secret = registered.signing_secret
        partner.token = registered.outbound_token
        setups[name] = PartnerSetup(partner, registered.partner_id, registered.api_key, spec["airports"])
    hosted = await hosted_service.register_hosted_partner(
        db, clock, box, name=HOSTED, airports=HOSTED_AIRPORTS, markup_percent=Decimal("5"), actor="soak"
    )
    card = json.loads((ROOT / "examples" / "rate-card.json").read_text())
    card["blackout_dates"] = []
    for vehicle in card["vehicles"]:
        vehicle["daily_capacity"] = 1000
    await hosted_service.set_rate_card(db, clock, hosted.partner_id, card, actor="soak")
    setups[HOSTED] = PartnerSetup(None, hosted.partner_id, hosted.api_key, HOSTED_AIRPORTS)
    made = []
    for n in range(clients):
        currencies, channels = AGENCIES[n % len(AGENCIES)]
        created = await client_service.create_client(
            db,
            clock,
            NewClient(name=f"Soak agency {n + 1}", pay_type="wallet", currency=currencies[0], opening_balance=OPENING),
            actor="soak",
        )
        for currency in currencies[1:]:
            await client_service.add_wallet(db, clock, created.client_id, currency, default=False, actor="soak")
            await client_service.top_up(db, clock, created.client_id, OPENING, actor="soak", currency=currency)
        if channels:
            change = SettingsChange(
                channels=channels,
                brand_name=f"Soak Travel {n + 1}",
                sms_sender="SoakTravel",
                support_phone="+442071234567",
                travellers_consented="sms" in channels,
            )
            await settings_service.update_settings(db, clock, created.client_id, change, actor="soak")
        made.append(Agency(created.client_id, created.api_key, currencies, channels))
    return setups, made, servers


@dataclass(frozen=True)
class Agency:
    client_id: int
    api_key: str
    currencies: tuple[str, ...]  # its wallets, the default first
    channels: tuple[str, ...]  # its travellers' messages (empty: off)


def quotes(currency: str) -> list[dict[str, Any]]:
    """The fake partner's vehicles, priced in ``currency`` with its own decimals (yen: none)."""
    vehicles = default_vehicles(currency=currency)
    if currency == "JPY":
        for vehicle, price in zip(vehicles, ("6500", "11300"), strict=True):
            vehicle["price"] = price
            for extra, extra_price in zip(vehicle["extras"], ("800", "2000"), strict=False):
                extra["price"] = extra_price
    return vehicles
