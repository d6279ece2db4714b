"""Who a client key names: the authenticated client as one auth lookup returns it, its status and
what it may do. Pure: no SQL, no HTTP. Here, below ``clients/`` (the accounts, which issue keys),
because the authenticator builds it (``auth/service.py``) and the wallet statement reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

REVERSE_API_PAY_TYPE = "reverse_api"


class Permission(StrEnum):
    BOOKING_CREATE = "booking.create"
    BOOKING_CANCEL = "booking.cancel"


class ClientStatus(StrEnum):
    ACTIVE = "active"
    SUSPENDED = "suspended"


@dataclass(frozen=True, slots=True)
class ClientPrincipal:
    """The authenticated caller of the booking API, as one auth lookup returns it."""

    client_id: int
    name: str
    pay_type: str
    status: str
    can_create: bool
    can_cancel: bool
    currency: str
    key_prefix: str

    @property
    def pays_by_wallet(self) -> bool:
        """docs/rules/accounts.md#payment: ``reverse_api`` is third-party payment; any other value pays from the
        wallet."""
        return self.pay_type != REVERSE_API_PAY_TYPE

    def may(self, permission: Permission) -> bool:
        if permission is Permission.BOOKING_CREATE:
            return self.can_create
        return self.can_cancel
