"""Hypothesis stateful model of bookings and the wallet (hardening item 6, RELIABILITY B2).

Random programs of search, book (fresh or repeated Idempotency-Key), client cancel (keeping the
vehicle's 20 % cancellation fee, docs/rules/cancellation.md), partner
approve/cancel through the reverse API, top-up and read run against the real service over HTTP
(its own thread and event loop, so Hypothesis can drive it synchronously). After every step the
model's balance must equal the wallet, the wallet its ledger, and statuses must be what the state
machine allows; another client's reservation must stay invisible.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule

from tests.conftest import make_settings
from tests.fake_partner import FakePartner, default_vehicles
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.accounting import service as books
from transfers.app import create_app
from transfers.bookings.state import TRANSITIONS, BookingStatus
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner
from transfers.wallet import repository as wallet_repo

T = TypeVar("T")
AIRPORT = "HAM"
PRICE = Decimal("25.00")
CLIENT_FEE = Decimal("5.00")  # the vehicle's policy keeps 20 % on a client's cancel; a partner's refunds all


class Stack:
    """The service, one fake partner and a database handle on a private event loop thread."""

    def __init__(self, database_url: str, workdir: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.settings = make_settings(database_url, workdir)
        self.db = Database(database_url, pool_size=5)
        self.clock = ShiftedClock()
        vehicles = default_vehicles(price=str(PRICE))[:1]
        # docs/rules/cancellation.md
        vehicles[0]["cancellation_policy"] = [{"hours_before_pickup": 0, "fee_percent": 20}]
        self.partner = FakePartner(vehicles=vehicles, create_status="PENDING")
        self.service = LiveServer(create_app(self.settings, clock=self.clock, configure_logs=False))
        self.partner_server = LiveServer(self.partner.app())
        self.run(self._start())

    async def _start(self) -> None:
        await self.service.start()
        await self.partner_server.start()
        box = SecretBox(self.settings.secret_key)
        registered = await register_partner(
            self.db,
            self.clock,
            box,
            name="Model partner",
            base_url=self.partner_server.url,
            airports=(AIRPORT,),
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="tests",
        )
        self.partner_id = registered.partner_id
        self.partner_key = registered.api_key

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=60)

    async def _stop(self) -> None:
        from transfers.partners import repository

        async with self.db.write() as conn:
            await repository.set_status(conn, self.partner_id, "disabled")
        await self.service.stop()
        await self.partner_server.stop()
        await self.db.dispose()

    def close(self) -> None:
        self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def stack(database_url: str, workdir: Path) -> Iterator[Stack]:
    s = Stack(database_url, workdir)
    yield s
    s.close()


class BookingModel(RuleBasedStateMachine):
    stack: Stack
    bookings = Bundle("bookings")

    @initialize()
    def open_account(self) -> None:
        s = self.stack
        created = s.run(
            client_service.create_client(
                s.db,
                s.clock,
                NewClient(name="Model agency", pay_type="wallet", currency="EUR", opening_balance=Decimal("60.00")),
                actor="model",
            )
        )
        other = s.run(
            client_service.create_client(
                s.db,
                s.clock,
                NewClient(name="Other agency", pay_type="wallet", currency="EUR", opening_balance=Decimal("0")),
                actor="model",
            )
        )
        self.client_id, self.key, self.other_key = created.client_id, created.api_key, other.api_key
        self.http = httpx.Client(base_url=s.service.url, timeout=30)
        self.balance = Decimal("60.00")
        self.status: dict[str, str] = {}
        self.search_id = self._search()

    def _search(self) -> str:
        body = search_body(pickup_location={"type": "AIRPORT", "iata_code": AIRPORT})
        answer = self.http.post("/api/v1/booking-api/search", json=body, headers=self._auth())
        assert answer.status_code == 200, answer.text
        search_id: str = answer.json()["search_id"]
        return search_id

    def _auth(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.key}"}

    @rule(target=bookings, repeat_key=st.booleans())
    def book(self, repeat_key: bool) -> str:
        key = "model-repeat" if repeat_key else uuid.uuid4().hex
        answer = self.http.post(
            "/api/v1/booking-api/booking",
            json=booking_body(self.search_id),
            headers={**self._auth(), "Idempotency-Key": key},
        )
        if answer.status_code == 422 and answer.json()["code"] == 1101:
            # A repeated Idempotency-Key replays its first answer, a refusal included.
            replayed = repeat_key and answer.headers.get("Idempotent-Replayed") == "true"
            assert self.balance < PRICE or replayed
            return "none"
        assert answer.status_code == 200, answer.text
        booking = answer.json()["booking"]
        reservation = booking["reservation_no"]
        if answer.headers.get("Idempotent-Replayed") != "true" and reservation not in self.status:
            self.balance -= PRICE
            assert booking["status"] == "PENDING_APPROVAL"
        self.status.setdefault(reservation, booking["status"])
        return str(reservation)

    @rule(reservation=bookings)
    def client_cancels(self, reservation: str) -> None:
        if reservation == "none":
            return
        answer = self.http.delete(
            "/api/v1/booking-api/booking",
            headers=self._auth(),
            params={"reservation_no": reservation, "cancellation_id": 1},
        )
        if self.status[reservation] in ("PENDING_APPROVAL", "APPROVED"):
            assert answer.json()["status"] == "Success", answer.text
            self._moved(reservation, "CANCELLED")
            self.balance += PRICE - CLIENT_FEE
        else:
            assert answer.json()["code"] == 1204

    @rule(reservation=bookings, approve=st.booleans())
    def partner_updates(self, reservation: str, approve: bool) -> None:
        if reservation == "none":
            return
        body: dict[str, Any] = {"reservation_no": reservation, "status": "APPROVED" if approve else "CANCELLED"}
        if approve:
            body["driver_info"] = {"name": "Model Driver", "phone": "+447400123456", "plate": "MD1"}
        answer = self.http.put("/api/v1/reverse/booking/update", json=body, headers=self._auth(self.stack.partner_key))
        current = self.status[reservation]
        target = body["status"]
        allowed = current == target or BookingStatus(target) in TRANSITIONS[BookingStatus(current)]
        assert (answer.status_code == 200) == allowed, (current, target, answer.text)
        if allowed and current != target:
            self._moved(reservation, target)
            if target == "CANCELLED":
                self.balance += PRICE

    @rule()
    def partner_declines_a_booking(self) -> None:
        """A declined booking is debited and refunded in the same run of the create."""
        self.stack.partner.create_status = "DECLINED"
        try:
            answer = self.http.post(
                "/api/v1/booking-api/booking", json=booking_body(self.search_id), headers=self._auth()
            )
        finally:
            self.stack.partner.create_status = "PENDING"
        if answer.status_code == 422:
            assert answer.json()["code"] == 1101 and self.balance < PRICE
            return
        assert answer.status_code == 200 and answer.json()["booking"]["status"] == "DECLINED", answer.text
        self.status[answer.json()["booking"]["reservation_no"]] = "DECLINED"

    @rule(amount=st.sampled_from(["0.01", "10.00", "25.00"]))
    def top_up(self, amount: str) -> None:
        s = self.stack
        s.run(client_service.top_up(s.db, s.clock, self.client_id, Decimal(amount), actor="model"))
        self.balance += Decimal(amount)

    @rule(reservation=bookings)
    def reads(self, reservation: str) -> None:
        if reservation == "none":
            return
        mine = self.http.get(
            "/api/v1/booking-api/booking", params={"reservation_no": reservation}, headers=self._auth()
        )
        assert mine.json()["status"] == self.status[reservation]
        theirs = self.http.get(
            "/api/v1/booking-api/booking", params={"reservation_no": reservation}, headers=self._auth(self.other_key)
        )
        assert theirs.status_code == 422 and theirs.json()["code"] == 1401

    def _moved(self, reservation: str, target: str) -> None:
        assert BookingStatus(target) in TRANSITIONS[BookingStatus(self.status[reservation])]
        self.status[reservation] = target

    @invariant()
    def money_adds_up(self) -> None:
        if not hasattr(self, "client_id"):
            return
        s = self.stack

        async def read() -> tuple[Decimal, Decimal]:
            async with s.db.read() as conn:
                wallet = await wallet_repo.wallet_of_client(conn, self.client_id)
                assert wallet is not None
                return wallet[2], await wallet_repo.ledger_sum(conn, wallet[0])

        balance, ledger = s.run(read())
        assert balance == ledger == self.balance
        assert s.run(books.ledger_check(s.db)) is None  # the journal reconciles (docs/rules/statements.md)
        assert balance >= 0
        # The same through the API (docs/rules/wallet.md): GET /wallet, and the statement paged
        # through sums to it, its newest balance_after is it, one debit and at most one refund each.
        shown = self.http.get("/api/v1/booking-api/wallet", headers=self._auth()).json()
        assert shown == {"pay_type": "wallet", "currency": "EUR", "balance": f"{self.balance:.2f}"}
        entries: list[dict[str, Any]] = []
        cursor = None
        for _ in range(100):
            page = self.http.get(
                "/api/v1/booking-api/wallet/entries",
                headers=self._auth(),
                params={"limit": 9, **({"cursor": cursor} if cursor else {})},
            ).json()
            entries += page["data"]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert sum(Decimal(e["amount"]) for e in entries) == self.balance
        assert entries[0]["balance_after"] == shown["balance"]
        for kind in ("debit", "refund"):
            numbers = [e["reservation_no"] for e in entries if e["kind"] == kind]
            assert len(numbers) == len(set(numbers)), (kind, numbers)
        assert {n for n, status in self.status.items() if status in ("CANCELLED", "DECLINED")} == {
            e["reservation_no"] for e in entries if e["kind"] == "refund"
        }

    def teardown(self) -> None:
        if hasattr(self, "http"):
            self.http.close()


def test_booking_and_wallet_model(stack: Stack) -> None:
    BookingModel.stack = stack
    runner = BookingModel.TestCase
    runner.settings = settings(
        max_examples=25,
        stateful_step_count=20,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    runner().runTest()
