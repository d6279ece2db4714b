"""The incident use cases (docs/rules/incidents.md), each one write transaction with the booking's row
locked (``lifecycle.lock_booking``): the incident row, its resolution, the refund (the client's
wallet, ``wallet.repository``), the booking's move to REFUNDED (``lifecycle.transition``, whose
ledger effect then refunds nothing more: ``cancel_rules.refund_due`` subtracts what incidents
refunded), the partner's recovered share, the audit and the client events commit together or not
at all.

* ``report``: a client's report (``POST /booking/incidents``); a DRIVER_NO_SHOW with no recorded
  arrival at the pickup is decided at once (docs/rules/incidents.md#driver-no-show).
* ``open_customer_no_show``: the partner's CUSTOMER_NO_SHOW event, in the ride's own transaction
  (docs/rules/incidents.md#customer-no-show).
* ``resolve``: an operator's decision (console, CLI), audited. Two operators at once: the booking's
  row lock orders them and the compare-and-set on ``status = 'OPEN'`` lets one win; the other gets
  ``AlreadyResolved`` and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import PLATFORM, THIRD_PARTY_REFUND, WORLD, transfer
from transfers.bookings import repository as booking_repo
from transfers.bookings.client_queries import booking_to_act_on
from transfers.bookings.earnings import recover_partner_share
from transfers.bookings.event_effects import write_incident_event
from transfers.bookings.lifecycle import lock_booking, transition, update_details
from transfers.bookings.models import Booking
from transfers.bookings.reverse import BookingNotFound, partner_view
from transfers.bookings.state import BookingStatus
from transfers.clients.models import REVERSE_API_PAY_TYPE, ClientPrincipal
from transfers.clients.repository import record_admin_action
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Code, Conflict, ErrorCode, NotFound
from transfers.incidents import evidence, rules
from transfers.incidents import repository as repo
from transfers.incidents.models import Incident, QueuedIncident, new_public_id
from transfers.incidents.rules import IncidentType, Reporter, Responsible
from transfers.services import Services
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import incident_refund_kind

AUTOMATIC = "automatic"  # ``resolution.by`` of a decision the service takes itself
NO_ARRIVAL_NOTE = "No arrival at the pickup was recorded: the partner is responsible and the whole price is refunded."
CUSTOMER_NO_SHOW_NOTE = "The driver reported that the customer did not show up."
CUSTOMER_NO_SHOW_DESCRIPTION = "The driver waited at the pickup and the customer did not show up."


class AlreadyResolved(Conflict):
    default_message = "This incident was resolved meanwhile; nothing was done. Look again."


class NoSuchIncident(NotFound):
    default_message = "There is no such incident."


@dataclass(frozen=True, slots=True)
class Resolution:
    """What an operator (or the service) decides: already validated (``rules.parse_*``)."""

    responsible: Responsible
    refund: Decimal
    note: str


# --- a client's report -------------------------------------------------------------------------------


async def report(svc: Services, client: ClientPrincipal, reservation_no: str | None, body: dict[str, Any]) -> Incident:
    """``POST /booking/incidents`` (docs/rules/incidents.md#report). Order of the checks: the
    reservation (1200, 1201, as on cancel), the body (INVALID_INCIDENT), the booking's window
    (INCIDENT_NOT_ALLOWED, read under the row lock at the clock's now), one per type (INCIDENT_EXISTS)."""
    found = await booking_to_act_on(svc, client, reservation_no)
    incident_type, description = rules.parse_report(body)
    try:
        async with svc.db.write() as conn:
            booking = await lock_booking(conn, found.id)
            if booking is None:
                raise NotFound(Code.CANCELLATION_RESERVATION_NOT_FOUND)
            now = svc.clock.now()
            rules.check_reportable(booking.status, booking.pickup_at, now, await _completed_at(conn, booking))
            if await repo.type_exists(conn, booking.id, incident_type.value):
                raise Conflict(ErrorCode.INCIDENT_EXISTS)
            incident = await _open(conn, booking, incident_type, Reporter.CLIENT, description, now)
            if incident_type is IncidentType.DRIVER_NO_SHOW and await _no_show_on_record(conn, booking, now):
                whole = rules.unrefunded(booking.status, booking.total, booking.incident_refunded)
                decision = Resolution(Responsible.PARTNER, whole, NO_ARRIVAL_NOTE)
                incident = await _resolve_locked(conn, booking, incident, decision, now=now, by=AUTOMATIC)
    except repo.DuplicateIncident:  # the same type reported at the same moment: the database kept one
        raise Conflict(ErrorCode.INCIDENT_EXISTS) from None
    return incident


async def _no_show_on_record(conn: AsyncConnection, booking: Booking, now: datetime) -> bool:
    """docs/rules/incidents.md#driver-no-show: whether the ride's record decides a DRIVER_NO_SHOW at once
    (nothing says the driver came, and the partner reports its rides)."""
    recorded = await evidence.recorded_types(conn, booking.id)
    coverage = await evidence.partner_coverage(conn, booking.partner_id, now)
    return rules.driver_no_show_decided(IncidentType.DRIVER_NO_SHOW, recorded, coverage.completed, coverage.covered)


async def _completed_at(conn: AsyncConnection, booking: Booking) -> datetime | None:
    """When the booking last became COMPLETED (its transitions), None while it is not COMPLETED."""
    if booking.status is not BookingStatus.COMPLETED:
        return None
    moments = [
        t.created_at
        for t in await booking_repo.transitions_of(conn, booking.id)
        if t.to_status == BookingStatus.COMPLETED.value != t.from_status
    ]
    return max(moments, default=None)


async def for_client(svc: Services, client: ClientPrincipal, reservation_no: str | None) -> list[Incident]:
    """``GET /booking/incidents``: the client's booking's incidents, oldest first (1200, 1201 as on cancel)."""
    booking = await booking_to_act_on(svc, client, reservation_no)
    async with svc.db.read() as conn:
        return await repo.of_booking(conn, booking.id)


async def of_booking(conn: AsyncConnection, booking_id: int) -> list[Incident]:
    """A booking's incidents for a page or answer that already holds the booking (console, portal,
    the reverse API's booking info): the caller scoped the booking to its viewer."""
    return await repo.of_booking(conn, booking_id)


# --- the partner's customer no-show ------------------------------------------------------------------


async def open_customer_no_show(conn: AsyncConnection, booking: Booking, now: datetime) -> Incident | None:
    """docs/rules/incidents.md#customer-no-show: the partner's CUSTOMER_NO_SHOW event opens a
    CUSTOMER_NO_SHOW incident resolved at once (responsible client, refund 0.00), in the ride's
    transaction (``booking`` locked by it): the ride's ``customer_no_show`` moment (``ride/hooks.py``),
    registered by ``transfers/features.py``. None when the booking has one already (an event repeated)."""
    if await repo.type_exists(conn, booking.id, IncidentType.CUSTOMER_NO_SHOW.value):
        return None
    incident = await _open(
        conn, booking, IncidentType.CUSTOMER_NO_SHOW, Reporter.PARTNER, CUSTOMER_NO_SHOW_DESCRIPTION, now
    )
    decision = Resolution(Responsible.CLIENT, rules.ZERO, CUSTOMER_NO_SHOW_NOTE)
    return await _resolve_locked(conn, booking, incident, decision, now=now, by=AUTOMATIC)


# --- an operator's resolution ------------------------------------------------------------------------


async def resolve(
    db: Database, clock: Clock, public_id: str, *, responsible: object, refund: object, note: object, actor: str
) -> Incident:
    """An operator resolves an OPEN incident (docs/rules/incidents.md#resolve): console ``Resolve``
    and ``transfers incidents resolve``; the caller checked the admin role. Raises NoSuchIncident,
    ``rules.InvalidResolution`` (nothing written) or AlreadyResolved."""
    who = rules.parse_responsible(responsible)
    text = rules.clean_note(note)
    async with db.read() as conn:
        found = await repo.by_public_id(conn, public_id) if isinstance(public_id, str) else None
    if found is None:
        raise NoSuchIncident()
    async with db.write() as conn:
        booking = await lock_booking(conn, found.booking_id)
        incident = await repo.by_public_id(conn, public_id)
        if booking is None or incident is None:
            raise NoSuchIncident()
        if incident.status != rules.IncidentStatus.OPEN:
            raise AlreadyResolved()
        amount = rules.parse_refund(
            refund, rules.unrefunded(booking.status, booking.total, booking.incident_refunded), booking.currency
        )
        now = clock.now()
        resolved = await _resolve_locked(conn, booking, incident, Resolution(who, amount, text), now=now, by=actor)
        await record_admin_action(
            conn,
            actor=actor,
            action="incident.resolve",
            subject=f"booking:{booking.reservation_no}",
            details={
                "incident": public_id,
                "type": incident.type,
                "responsible": who.value,
                "refund": money.text(amount, booking.currency),
                "currency": booking.currency,
                "note": text,
            },
            now=now,
        )
    return resolved


async def listing(db: Database, *, open_only: bool) -> list[Incident]:
    async with db.read() as conn:
        return await repo.listing(conn, open_only=open_only)


async def open_queue(db: Database, *, limit: int) -> tuple[list[QueuedIncident], int]:
    """The console's incidents queue: the oldest ``limit`` open incidents with their bookings, and how many
    are open in all (read together, so the count and the list agree)."""
    async with db.read() as conn:
        return await repo.open_queue(conn, limit=limit), await repo.count_open(conn)


async def for_operator(db: Database, booking: Booking) -> tuple[list[Incident], evidence.Evidence]:
    """The console's booking page: the booking's incidents and the ride's evidence to weigh them by."""
    async with db.read() as conn:
        return await repo.of_booking(conn, booking.id), await evidence.of_booking(conn, booking)


async def get(db: Database, public_id: str) -> Incident:
    async with db.read() as conn:
        found = await repo.by_public_id(conn, public_id)
    if found is None:
        raise NoSuchIncident()
    return found


# --- the pieces ----------------------------------------------------------------------------------------


async def _open(
    conn: AsyncConnection,
    booking: Booking,
    incident_type: IncidentType,
    reporter: Reporter,
    description: str,
    now: datetime,
) -> Incident:
    incident_id = await repo.insert_incident(
        conn,
        {
            "public_id": new_public_id(),
            "booking_id": booking.id,
            "type": incident_type.value,
            "status": rules.IncidentStatus.OPEN.value,
            "reported_by": reporter.value,
            "description": description,
            "created_at": now,
        },
    )
    incident = await repo.get(conn, incident_id)
    await write_incident_event(conn, booking, opened=True, incident=incident.resource(), now=now)
    return incident


async def _resolve_locked(
    conn: AsyncConnection, booking: Booking, incident: Incident, decision: Resolution, *, now: datetime, by: str
) -> Incident:
    """Resolve ``incident`` of ``booking`` (locked by the caller, the refund already checked against
    what is unrefunded): the resolution, the refund and its consequences, the client event."""
    if not await repo.mark_resolved(
        conn,
        incident.id,
        responsible=decision.responsible.value,
        refund=decision.refund,
        note=decision.note,
        now=now,
        by=by,
    ):
        raise AlreadyResolved()
    if decision.refund > 0:
        booking = await _refund(conn, booking, incident, decision, now=now, by=by)
    resolved = await repo.get(conn, incident.id)
    await write_incident_event(conn, booking, opened=False, incident=resolved.resource(), now=now)
    return resolved


async def _refund(
    conn: AsyncConnection, booking: Booking, incident: Incident, decision: Resolution, *, now: datetime, by: str
) -> Booking:
    """docs/rules/incidents.md#resolve: the refund reaches the client's wallet (a ``reverse_api``
    client paid elsewhere: recorded on the booking, nothing moves); the refund that completes the
    price moves the booking to REFUNDED; the partner's share is recovered when it is responsible."""
    refunded = (booking.incident_refunded or rules.ZERO) + decision.refund
    reason = f"incident {incident.public_id} ({incident.type}): refund {money.text(decision.refund, booking.currency)}"
    fields = {"incident_refunded": refunded}
    if refunded == booking.total and booking.status in (BookingStatus.APPROVED, BookingStatus.COMPLETED):
        moved = await transition(conn, booking, BookingStatus.REFUNDED, actor=by, reason=reason, now=now, fields=fields)
    else:
        moved = await update_details(conn, booking, fields, actor=by, reason=reason, now=now)
    note = f"incident {incident.public_id} ({incident.type}): {decision.note}"[:1000]
    if booking.pay_type == REVERSE_API_PAY_TYPE:
        # A third party paid the partner: nothing moves here, the journal records the money owed back
        # as the status refund of such a booking does (docs/rules/statements.md#journal).
        await journal_repo.post(
            conn,
            transfer(
                THIRD_PARTY_REFUND, booking.currency, PLATFORM, WORLD, decision.refund, booking_id=booking.id, note=note
            ),
            now,
        )
    else:
        await wallet_repo.post_entry_for_client(
            conn,
            client_id=booking.client_id,
            currency=booking.currency,
            kind=incident_refund_kind(incident.type),
            amount=decision.refund,
            now=now,
            booking_id=booking.id,
            note=note,
        )
    if decision.responsible is Responsible.PARTNER:
        # docs/rules/statements.md#earnings: the journal decides whether the booking earned (or will earn) its ride
        await recover_partner_share(conn, moved, decision.refund, now=now, note=note)
    return moved


# --- the partner's view ----------------------------------------------------------------------------


async def booking_for_partner(svc: Services, partner_id: int, reservation_no: str) -> dict[str, Any]:
    """The partner's view of a booking it holds (``bookings/reverse.partner_view``) with its ``incidents``
    (docs/rules/incidents.md#resolve: the partner sees them and their resolutions). Raises BookingNotFound."""
    async with svc.db.read() as conn:
        booking = await booking_repo.get_for_partner(conn, partner_id, reservation_no)
        if booking is None:
            raise BookingNotFound()
        found = await repo.of_booking(conn, booking.id)
    return {**partner_view(booking), "incidents": [incident.resource() for incident in found]}
