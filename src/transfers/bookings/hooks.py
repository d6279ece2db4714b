"""What a booking's use cases tell the feature packages (``flights/``, ``ride/``, ``incidents/``,
``returns/``), which sit above ``bookings/`` and register here at start-up (``transfers/features.py``,
called by ``create_app``, the CLI and the tests), as the delivery kinds are registered in
``transfers/deliveries.py``. The arrow runs from the feature to ``bookings/`` only: a booking use case
never imports a feature, it runs what is registered for its moment (docs/architecture/index.md#layers).

A handler that writes runs in the same transaction as the change it hears of (it is given the change's
connection and must not commit, open another transaction or call out over the network), so the change
and what the feature does about it commit or roll back together. Handlers run in registration order;
registering one twice is a no-op (start-up may run more than once in a process: the tests' app factories).

The moments:

* **a new booking is prepared** (``new_booking``): before the single create or a return trip's leg is
  written, the handler may add column values (a flight's watch). With ``conn`` None it runs outside any
  transaction (the single create's one-statement write follows; each of its own writes is a statement of
  its own, as ``fast_paths`` requires); with ``conn`` it runs in the create's transaction. It answers
  what to do once the booking is stored (outside the transaction, never in the answer's way: the
  flight's first check), or None.
* **an amendment is applied** (``amendment_applied``): the partner confirmed a ``PATCH /booking``; given
  the booking before it and the columns it changes, the handler answers more columns for the same
  update (the flight's watch restarts), in the amendment's transaction.
* **what the partner refunded** (``partner_refunds``): a read in a change's transaction, how much of
  a booking the features refunded as the partner's responsibility (the incidents' refunds), which a
  fee-keeping cancel's journal entries carry (``bookings/journal_effects.py``,
  docs/rules/incidents.md#refund-then-cancel). The handlers' answers are added up (0 without any).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking

if TYPE_CHECKING:  # the use cases pass their Services; no run-time import needed here
    from transfers.services import Services

AfterCreate = Callable[[Booking], None]
"""Run once a new booking is stored, with the booking as stored (outside any transaction)."""


class NewBooking(Protocol):
    async def __call__(
        self, svc: Services, values: dict[str, Any], now: datetime, conn: AsyncConnection | None
    ) -> AfterCreate | None: ...


AmendmentApplied = Callable[[AsyncConnection, Booking, dict[str, Any], datetime], Awaitable[dict[str, Any]]]
PartnerRefunds = Callable[[AsyncConnection, int], Awaitable[Decimal]]


class Hooks:
    """The registered handlers of each moment (one instance per process: ``HOOKS``)."""

    def __init__(self) -> None:
        self.new_booking: list[NewBooking] = []
        self.amendment_applied: list[AmendmentApplied] = []
        self.partner_refunds: list[PartnerRefunds] = []

    def on_new_booking(self, handler: NewBooking) -> None:
        _add(self.new_booking, handler)

    def on_amendment_applied(self, handler: AmendmentApplied) -> None:
        _add(self.amendment_applied, handler)

    def on_partner_refunds(self, handler: PartnerRefunds) -> None:
        _add(self.partner_refunds, handler)

    async def prepare_new(
        self, svc: Services, values: dict[str, Any], now: datetime, conn: AsyncConnection | None = None
    ) -> list[AfterCreate]:
        """Every ``new_booking`` handler on ``values`` (which they may extend); what to run once stored."""
        afters = []
        for handler in self.new_booking:
            after = await handler(svc, values, now, conn)
            if after is not None:
                afters.append(after)
        return afters

    async def amended(
        self, conn: AsyncConnection, booking: Booking, fields: dict[str, Any], now: datetime
    ) -> dict[str, Any]:
        """The columns the ``amendment_applied`` handlers add to an applied amendment's ``fields``."""
        more: dict[str, Any] = {}
        for handler in self.amendment_applied:
            more.update(await handler(conn, booking, {**fields, **more}, now))
        return more

    async def refunded_by_partner(self, conn: AsyncConnection, booking_id: int) -> Decimal:
        """What the features refunded of booking ``booking_id`` as the partner's responsibility."""
        total = Decimal(0)
        for handler in self.partner_refunds:
            total += await handler(conn, booking_id)
        return total


def created(afters: list[AfterCreate], booking: Booking) -> None:
    """Run what the ``new_booking`` handlers asked for, now that ``booking`` is stored."""
    for after in afters:
        after(booking)


def _add(handlers: list[Any], handler: Any) -> None:
    if handler not in handlers:
        handlers.append(handler)


HOOKS = Hooks()
"""This process's registrations (``transfers/features.py`` fills it at start-up)."""
