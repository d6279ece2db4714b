"""Operators: the people who run the service through the console (docs/rules/console.md). Pure: no SQL, no HTTP.

Roles: ``support`` reads everything and may cancel bookings, retry deliveries and sync a booking
with its partner; ``admin`` may also move money (top-ups, refunds) and manage clients, partners and
operators. A page shows only the controls its operator ``may`` use, and the server checks again."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from transfers.errors import Invalid


class Role(StrEnum):
    ADMIN = "admin"
    SUPPORT = "support"


class OperatorStatus(StrEnum):
    ACTIVE = "active"
    DISABLED = "disabled"


class Capability(StrEnum):
    READ = "read"
    CANCEL_BOOKING = "cancel_booking"
    SYNC_BOOKING = "sync_booking"
    RETRY_DELIVERY = "retry_delivery"
    MOVE_MONEY = "move_money"  # top-ups, refunds
    MANAGE_CLIENTS = "manage_clients"
    MANAGE_PARTNERS = "manage_partners"
    MANAGE_OPERATORS = "manage_operators"
    SET_RATES = "set_rates"  # a manual exchange rate (docs/rules/fx.md#console)


SUPPORT_CAPABILITIES = frozenset(
    {Capability.READ, Capability.CANCEL_BOOKING, Capability.SYNC_BOOKING, Capability.RETRY_DELIVERY}
)
CAPABILITIES: dict[Role, frozenset[Capability]] = {
    Role.SUPPORT: SUPPORT_CAPABILITIES,
    Role.ADMIN: frozenset(Capability),
}


@dataclass(frozen=True, slots=True)
class Operator:
    operator_id: int
    email: str
    role: Role
    status: OperatorStatus

    def may(self, capability: Capability) -> bool:
        return self.status is OperatorStatus.ACTIVE and capability in CAPABILITIES[self.role]

    @property
    def actor(self) -> str:
        """How audit rows and booking transitions name this operator."""
        return f"operator:{self.email}"


class OperatorProblem(Invalid):
    """A refused operator change (duplicate e-mail, bad e-mail or password, unknown operator)."""
