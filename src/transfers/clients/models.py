"""Clients (travel professionals' accounts) and what they may do. Pure: no SQL, no HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

# The principal lives with the authenticator (auth/principals.py); these names stay importable here.
from transfers.auth.principals import REVERSE_API_PAY_TYPE as REVERSE_API_PAY_TYPE
from transfers.auth.principals import ClientPrincipal as ClientPrincipal
from transfers.auth.principals import ClientStatus as ClientStatus
from transfers.auth.principals import Permission as Permission


@dataclass(frozen=True, slots=True)
class NewClient:
    name: str
    pay_type: str
    currency: str
    opening_balance: Decimal
    can_create: bool = True
    can_cancel: bool = True
