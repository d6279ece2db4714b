"""Hypothesis stateful model of the books in several currencies (docs/rules/fx.md#books).

One agency holds wallets in GBP (its default), EUR, JPY and KWD; four partners at Antalya quote in EUR,
GBP, JPY and KWD (each with its own markup and a policy keeping 20 % on a client's cancel), served as
real loopback HTTP partners (tests/fake_partner.py) to the real service over HTTP, with the sandbox
rates. Random programs of searches and bookings in any of the four currencies from any of the four
partners, the partners' approvals and cancels (reverse API), the clients' cancels (booking API),
completed rides, incidents resolved with partial and whole refunds for each responsibility (the
console's and the CLI's use case), top-ups and month ends. After every step:

* ``transfers ledger check`` finds no difference: every journal entry balances in each of its
  currencies (the FX accounts carry a converted booking from one to the other), every wallet equals its
  account, every closed statement its partner's account;
* each wallet, read through the API, is the model's: debits, fees, refunds and incident refunds in the
  booking's currency, from its booked amounts;
* each partner's statement (in its own currency) closes at what the model says it is owed: ``RIDE`` = its
  own net, ``CANCELLATION_FEE`` = fee x net / total and ``RECOVERY`` = -(refund x net / total) with its
  own net and the client's fee, refund and total, rounded half-up in the partner's currency.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import httpx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from tests import ledger_world as world
from tests.conftest import make_settings
from tests.fake_partner import FakePartner
from tests.helpers import booking_body
from tests.servers import LiveServer
from transfers import money
from transfers.accounting import service as books
from transfers.app import create_app
from transfers.bookings.state import BookingStatus
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings
from transfers.incidents.rules import IncidentType
from transfers.partners import repository as partners_repo
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner
from transfers.reference.airports import find_airport

T = TypeVar("T")
S = BookingStatus
AIRPORT = "AYT"  # this model's partners only
DROPOFF = {"type": "POINT", "lat": 36.8841, "lng": 30.7056, "name": "Antalya centre"}
FEE_20 = [{"hours_before_pickup": 0, "fee_percent": 20}]
CURRENCIES = ("GBP", "EUR", "JPY", "KWD")
# each partner: its currency, its own net price of the one vehicle, the service's markup on it
PARTNERS = {"EUR": ("56.05", "10"), "GBP": ("45.00", "7"), "JPY": ("10010", "5"), "KWD": ("20.47", "3")}
OPENING = {"GBP": "400.00", "EUR": "400.00", "JPY": "60000", "KWD": "120.000"}
TOP_UPS = {"GBP": "45.55", "EUR": "0.01", "JPY": "7777", "KWD": "12.345"}
PARTS = ("0", "0.10", "0.37", "0.5", "all")  # of what is still unrefunded


def rounded(amount: Decimal, currency: str) -> Decimal:
    """Half-up to the currency's own decimals (ISO 4217)."""
    return amount.quantize(Decimal(1).scaleb(-money.places(currency)), ROUND_HALF_UP)


def share(amount: Decimal, own_net: Decimal, total: Decimal, currency: str) -> Decimal:
    """docs/rules/statements.md#earnings in the partner's currency: amount x net / total, half-up."""
    return rounded(amount * own_net / total, currency) if total > 0 else Decimal(0)


class Loop:
    """The service, the four partners and a database handle on a private event loop thread, so
    Hypothesis drives them synchronously."""

    def __init__(self, database_url: str, workdir: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.settings = make_settings(database_url, workdir)
        self.clock = ShiftedClock()
        self.db: Database = self.run(self._open(database_url))
        self.partners: dict[str, FakePartner] = {}
        self.servers: list[LiveServer] = []
        self.partner_ids: dict[str, int] = {}
        self.partner_keys: dict[str, str] = {}
        self.owed: dict[str, Decimal] = {}  # partner currency -> what its statement must close at
        self.service = LiveServer(create_app(self.settings, clock=self.clock, configure_logs=False))
        self.run(self._start())

    @staticmethod
    async def _open(url: str) -> Database:
        return Database(url, pool_size=4)

    async def _start(self) -> None:
        await self.service.start()
        box = SecretBox(self.settings.secret_key)
        for currency, (price, markup) in PARTNERS.items():
            vehicle = {
                "id": f"{currency.lower()}-1",
                "make": "Toyota",
                "model": "Corolla",
                "type": "SEDAN",
                "price": price,
                "currency": currency,
                "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
                "extras": [],
                "cancellation_policy": FEE_20,
            }
            partner = FakePartner(name=f"FX model {currency}", vehicles=[vehicle], create_status="PENDING")
            server = await LiveServer(partner.app()).start()
            partner.url = server.url
            self.servers.append(server)
            registered = await register_partner(
                self.db,
                self.clock,
                box,
                name=partner.name,
                base_url=server.url,
                airports=(AIRPORT,),
                markup_percent=Decimal(markup),
                allow_private=True,
                actor="tests",
            )
            self.partners[currency] = partner
            self.partner_ids[currency] = registered.partner_id
            self.partner_keys[currency] = registered.api_key
            self.owed[currency] = Decimal(0)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=120)

    async def _stop(self) -> None:
        async with self.db.write() as conn:
            for partner_id in self.partner_ids.values():
                await partners_repo.set_status(conn, partner_id, "disabled")
        await self.service.stop()
        for server in self.servers:
            await server.stop()
        await self.db.dispose()

    def close(self) -> None:
        self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def loop(database_url: str, workdir: Path) -> Iterator[Loop]:
    running = Loop(database_url, workdir)
    yield running
    running.close()


@dataclass
class Booked:
    """The model's booking: what it was sold at and what happened to its money."""

    booking_id: int
    status: str
    currency: str  # the client's, the booking's
    total: Decimal
    partner: str  # the partner's currency
    own_net: Decimal
    pickup_at: datetime
    refunded: Decimal = Decimal(0)  # what its incidents refunded, in the booking's currency
    theirs: Decimal = Decimal(0)  # ... of which the partner's responsibility
    recovered: Decimal = Decimal(0)  # the RECOVERY the partner gives back, positive, in its currency
    rode: bool = False
    types: set[IncidentType] = field(default_factory=set)


class FxBooksModel(RuleBasedStateMachine):
    env: Loop
    seen: ClassVar[Counter[str]] = Counter()  # what the runs exercised, checked after them

    @initialize()
    def open_account(self) -> None:
        env = self.env
        created = env.run(
            client_service.create_client(
                env.db,
                env.clock,
                NewClient(name="FX model agency", pay_type="wallet", currency="GBP", opening_balance=Decimal("0")),
                actor="model",
            )
        )
        self.client_id, self.key = created.client_id, created.api_key
        for currency in CURRENCIES[1:]:
            env.run(
                client_service.add_wallet(env.db, env.clock, self.client_id, currency, default=False, actor="model")
            )
        for currency in CURRENCIES:
            env.run(
                client_service.top_up(
                    env.db, env.clock, self.client_id, Decimal(OPENING[currency]), actor="model", currency=currency
                )
            )
        self.wallets = {c: Decimal(OPENING[c]) for c in CURRENCIES}
        self.http = httpx.Client(base_url=env.service.url, timeout=30)
        self.bookings: dict[str, Booked] = {}

    def _auth(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.key}"}

    def _mine(self, *statuses: str) -> list[str]:
        return sorted(n for n, b in self.bookings.items() if b.status in statuses)

    # --- the client's side ------------------------------------------------------------------------------

    @rule(currency=st.sampled_from(CURRENCIES), partner=st.sampled_from(tuple(PARTNERS)))
    def book(self, currency: str, partner: str) -> None:
        self._book(currency, partner)

    def _book(self, currency: str, partner: str) -> str | None:
        """Search in ``currency``, book ``partner``'s vehicle: its number, None when the wallet is short."""
        airport = find_airport(AIRPORT)
        assert airport is not None
        pickup = (self.env.clock.now() + timedelta(days=3)).astimezone(airport.tz).replace(second=0, microsecond=0)
        body = {
            "pickup_datetime": pickup.strftime("%Y-%m-%d %H:%M"),
            "pickup_location": {"type": "AIRPORT", "iata_code": AIRPORT},
            "dropoff_location": DROPOFF,
            "travelers": {"adult": 2, "children": 0, "infant": 0},
            "currency": currency,
        }
        found = self.http.post("/api/v1/booking-api/search", json=body, headers=self._auth())
        assert found.status_code == 200, found.text
        offers = {v["company"]: v for v in found.json()["vehicles"]}
        offer = offers[f"FX model {partner}"]
        assert offer["currency"] == currency
        assert (offer["fx"] is None) == (currency == partner)
        answer = self.http.post(
            "/api/v1/booking-api/booking",
            json=booking_body(found.json()["search_id"], offer["vehicle_id"]),
            headers=self._auth(),
        )
        price = Decimal(str(offer["price"]))  # a JSON number: 52.8
        if answer.status_code == 422 and answer.json().get("code") == 1101:
            assert self.wallets[currency] < price
            self.seen["insufficient"] += 1
            return None
        assert answer.status_code == 200, answer.text
        booking = answer.json()["booking"]
        total = Decimal(booking["price"]["total"])
        assert booking["price"]["currency"] == currency and total == price
        assert booking["status"] == "PENDING_APPROVAL", booking
        number = booking["reservation_no"]
        async_id = self.env.run(self._booking_id(number))
        own_net = Decimal(PARTNERS[partner][0])
        self.bookings[number] = Booked(async_id, "PENDING_APPROVAL", currency, total, partner, own_net, pickup)
        self.wallets[currency] -= total
        self.seen["converted" if currency != partner else "same currency"] += 1
        return str(number)

    @rule(currency=st.sampled_from(CURRENCIES), partner=st.sampled_from(tuple(PARTNERS)))
    def a_ride(self, currency: str, partner: str) -> None:
        """Booked, approved and completed: the common life of a booking."""
        number = self._book(currency, partner)
        if number is not None:
            self._approve(number)
            self._complete(number)

    @rule(
        currency=st.sampled_from(CURRENCIES),
        partner=st.sampled_from(tuple(PARTNERS)),
        parts=st.lists(st.sampled_from(("0.37", "0.5", "0.9", "all")), min_size=1, max_size=3),
        by_client=st.booleans(),
    )
    def a_troubled_booking(self, currency: str, partner: str, parts: list[str], by_client: bool) -> None:
        """Approved, refunded in part for the partner's incidents before its ride, then cancelled by the
        client (a fee kept: docs/rules/incidents.md#refund-then-cancel) or by the partner."""
        number = self._book(currency, partner)
        if number is None:
            return
        self._approve(number)
        for part in parts:
            if number in self._incident_candidates():
                self._incident(number, "partner", part)
        if self.bookings[number].status == "APPROVED":
            self._client_cancel(number) if by_client else self._partner_cancel(number)

    async def _booking_id(self, number: str) -> int:
        async with self.env.db.read() as conn:
            found = await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == number))
            return int(found.scalar_one())

    @precondition(lambda self: bool(self._mine("PENDING_APPROVAL", "APPROVED")))
    @rule(data=st.data())
    def client_cancels(self, data: st.DataObject) -> None:
        self._client_cancel(data.draw(st.sampled_from(self._mine("PENDING_APPROVAL", "APPROVED"))))

    def _client_cancel(self, number: str) -> None:
        booked = self.bookings[number]
        answer = self.http.delete(
            "/api/v1/booking-api/booking",
            params={"reservation_no": number, "cancellation_id": 1},
            headers=self._auth(),
        )
        if self.env.clock.now() >= booked.pickup_at:
            assert answer.json().get("status") != "Success", answer.text  # after the pickup: refused, nothing moves
            self.seen["cancel refused"] += 1
            return
        assert answer.json()["status"] == "Success", answer.text
        fee = rounded(booked.total * Decimal("0.20"), booked.currency)
        shown = self.http.get("/api/v1/booking-api/booking", params={"reservation_no": number}, headers=self._auth())
        assert shown.json()["cancellation"]["fee"] == money.text(fee, booked.currency)
        self.wallets[booked.currency] += max(booked.total - fee - booked.refunded, Decimal(0))
        self.env.owed[booked.partner] += share(fee, booked.own_net, booked.total, booked.partner)
        self._ended_without_ride(booked, fee)
        booked.status = "CANCELLED"
        self.seen["fee kept" + (" after an incident refund" if booked.refunded else "")] += 1

    # --- the partner's side -------------------------------------------------------------------------------

    @precondition(lambda self: bool(self._mine("PENDING_APPROVAL")))
    @rule(data=st.data())
    def partner_approves(self, data: st.DataObject) -> None:
        self._approve(data.draw(st.sampled_from(self._mine("PENDING_APPROVAL"))))

    def _approve(self, number: str) -> None:
        self._partner_update(number, "APPROVED")
        self.bookings[number].status = "APPROVED"

    @precondition(lambda self: bool(self._mine("PENDING_APPROVAL", "APPROVED")))
    @rule(data=st.data())
    def partner_cancels(self, data: st.DataObject) -> None:
        """The partner broke the deal: the client gets back all it has not had back yet, no fee."""
        self._partner_cancel(data.draw(st.sampled_from(self._mine("PENDING_APPROVAL", "APPROVED"))))

    def _partner_cancel(self, number: str) -> None:
        booked = self.bookings[number]
        self._partner_update(number, "CANCELLED")
        self.wallets[booked.currency] += booked.total - booked.refunded
        self._ended_without_ride(booked, Decimal(0))
        booked.status = "CANCELLED"
        self.seen["partner cancelled"] += 1

    def _partner_update(self, number: str, status: str) -> None:
        booked = self.bookings[number]
        body: dict[str, Any] = {"reservation_no": number, "status": status}
        if status == "APPROVED":
            body["driver_info"] = {"name": "Model Driver", "phone": "+905321234567", "plate": "07 FX 36"}
        answer = self.http.put(
            "/api/v1/reverse/booking/update", json=body, headers=self._auth(self.env.partner_keys[booked.partner])
        )
        assert answer.status_code == 200, answer.text

    @precondition(lambda self: bool(self._mine("APPROVED")))
    @rule(data=st.data())
    def ride_completed(self, data: st.DataObject) -> None:
        self._complete(data.draw(st.sampled_from(self._mine("APPROVED"))))

    def _complete(self, number: str) -> None:
        booked = self.bookings[number]
        self.env.run(world.move(self.env.db, booked.booking_id, S.COMPLETED, self.env.clock.now()))
        booked.status, booked.rode = "COMPLETED", True
        self.env.owed[booked.partner] += booked.own_net
        self.seen["ride" + (" converted" if booked.currency != booked.partner else "")] += 1

    # --- incidents ------------------------------------------------------------------------------------

    def _incident_candidates(self) -> list[str]:
        return [
            n
            for n in self._mine("APPROVED", "COMPLETED")
            if self.bookings[n].refunded < self.bookings[n].total and len(self.bookings[n].types) < len(IncidentType)
        ]

    @precondition(lambda self: bool(self._incident_candidates()))
    @rule(data=st.data(), responsible=st.sampled_from(["partner", "client", "none"]), part=st.sampled_from(PARTS))
    def incident(self, data: st.DataObject, responsible: str, part: str) -> None:
        """docs/rules/incidents.md#resolve, in the booking's currency; the partner's share recovered in its own."""
        self._incident(data.draw(st.sampled_from(self._incident_candidates())), responsible, part)

    def _incident(self, number: str, responsible: str, part: str) -> None:
        booked = self.bookings[number]
        kind = next(t for t in IncidentType if t not in booked.types)
        rest = booked.total - booked.refunded
        refund = rest if part == "all" else min(rounded(rest * Decimal(part), booked.currency), rest)
        resolved = self.env.run(
            world.incident(
                self.env.db,
                self.env.clock,
                booked.booking_id,
                kind,
                responsible=responsible,
                refund=money.text(refund, booked.currency),
            )
        )
        assert resolved.resource()["resolution"]["refund"] == money.text(refund, booked.currency)
        booked.types.add(kind)
        booked.refunded += refund
        self.wallets[booked.currency] += refund
        whole = booked.refunded == booked.total
        if responsible == "partner":
            booked.theirs += refund
        if whole and booked.status == "APPROVED":  # refunded in full before its ride: never earns, owes nothing
            booked.status = "REFUNDED"
            self._ended_without_ride(booked, Decimal(0))
            self.seen["refunded in full before the ride"] += 1
            return
        if whole:
            booked.status = "REFUNDED"
        if responsible == "partner" and refund > 0:
            recovered = share(refund, booked.own_net, booked.total, booked.partner)
            self.env.owed[booked.partner] -= recovered
            booked.recovered += recovered
            self.seen["recovered" + (" converted" if booked.currency != booked.partner else "")] += 1

    def _ended_without_ride(self, booked: Booked, fee: Decimal) -> None:
        """docs/rules/incidents.md#refund-then-cancel: a booking that ends without its RIDE gives back its
        RECOVERY, but for the partner's share of the part of a kept fee its incidents refunded."""
        if booked.rode or not booked.recovered:
            return
        kept = Decimal(0)
        taken = fee + booked.refunded - booked.total
        if fee > 0 and booked.refunded > 0 and taken > 0 and booked.theirs > 0:
            kept = share(taken * booked.theirs / booked.refunded, booked.own_net, booked.total, booked.partner)
            self.seen["recovery partly kept"] += 1
        after = min(booked.recovered, kept)
        self.env.owed[booked.partner] += booked.recovered - after
        booked.recovered = after
        self.seen["recovery given back"] += 1

    # --- money in, time ---------------------------------------------------------------------------------

    @rule(currency=st.sampled_from(CURRENCIES))
    def top_up(self, currency: str) -> None:
        amount = Decimal(TOP_UPS[currency])
        self.env.run(
            client_service.top_up(self.env.db, self.env.clock, self.client_id, amount, actor="model", currency=currency)
        )
        self.wallets[currency] += amount

    @rule(days=st.sampled_from([1, 4, 31]))
    def time_passes(self, days: int) -> None:
        """Days go by (a pickup passes: the client's cancel is refused); a month that ends is closed."""
        self.env.clock.advance(timedelta(days=days))
        self.seen["closed"] += self.env.run(books.close_ended(self.env.db, self.env.clock.now()))

    # --- after every step -------------------------------------------------------------------------------

    @invariant()
    def books_reconcile(self) -> None:
        if not hasattr(self, "client_id"):
            return
        env = self.env
        assert env.run(books.ledger_check(env.db)) is None
        shown = self.http.get("/api/v1/booking-api/wallets", headers=self._auth()).json()
        assert {w["currency"]: w["balance"] for w in shown["data"]} == {
            c: money.text(v, c) for c, v in self.wallets.items()
        }
        for currency, partner_id in env.partner_ids.items():
            statements = env.run(books.statements(env.db, partner_id))
            assert {s.currency for s in statements} <= {currency}  # a partner is paid in its own currency
            closing = statements[0].figures.closing if statements else Decimal(0)
            assert closing == env.owed[currency], (currency, closing, env.owed[currency])

    def teardown(self) -> None:
        if hasattr(self, "http"):
            self.http.close()


def new_model() -> FxBooksModel:
    return FxBooksModel()


def test_the_books_in_several_currencies(loop: Loop) -> None:
    FxBooksModel.env = loop
    run_state_machine_as_test(
        cast("type[RuleBasedStateMachine]", new_model),  # a factory, as tests/integration/test_stateful_ledger.py
        settings=settings(
            max_examples=6,
            stateful_step_count=20,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
    exercised = FxBooksModel.seen
    assert all(
        exercised[k] > 0
        for k in (
            "converted",
            "same currency",
            "ride converted",
            "fee kept",
            "partner cancelled",
            "recovered converted",
            "refunded in full before the ride",
            "recovery given back",
            "closed",
        )
    ), exercised
