"""A partner's monthly statement: its figures and its status (docs/rules/statements.md#statements). Pure.

A statement exists for each month in which the partner's account has lines. Its figures:

* ``opening_balance``: the account at the start of the month (the previous statement's closing);
* ``earned``: ``RIDE`` + ``CANCELLATION_FEE`` + ``ADJUSTMENT`` lines (an adjustment either way);
* ``recovered``: the ``RECOVERY`` lines (negative: money the partner gives back);
* ``paid``: the ``PAYOUT`` lines (negative: money paid out);
* ``closing_balance`` = opening + earned + recovered + paid: the account at the month's end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from transfers import money
from transfers.accounting.journal import PartnerLine

ZERO = Decimal("0.00")


class StatementStatus(StrEnum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"
    PAID = "PAID"


@dataclass(frozen=True, slots=True)
class Figures:
    opening: Decimal
    earned: Decimal
    recovered: Decimal
    paid: Decimal

    @property
    def closing(self) -> Decimal:
        return self.opening + self.earned + self.recovered + self.paid


def figures_of(opening: Decimal, by_kind: Mapping[str, Decimal]) -> Figures:
    """The figures of a month whose lines add up to ``by_kind`` (kind -> sum)."""
    recovered = by_kind.get(PartnerLine.RECOVERY.value, ZERO)
    paid = by_kind.get(PartnerLine.PAYOUT.value, ZERO)
    earned = sum((v for k, v in by_kind.items() if k not in (PartnerLine.RECOVERY, PartnerLine.PAYOUT)), ZERO)
    return Figures(opening, earned, recovered, paid)


@dataclass(frozen=True, slots=True)
class Statement:
    partner_id: int
    currency: str
    period: str
    status: StatementStatus
    figures: Figures
    id: int | None = None  # the closed statement's row; None while OPEN
    paid_reference: str | None = None

    def as_api(self) -> dict[str, str]:
        """The reverse API's statement object (docs/rules/statements.md#partner-api)."""
        f = self.figures
        return {
            "period": self.period,
            "currency": self.currency,
            "status": self.status.value,
            "opening_balance": money.text(f.opening, self.currency),
            "earned": money.text(f.earned, self.currency),
            "recovered": money.text(f.recovered, self.currency),
            "paid": money.text(f.paid, self.currency),
            "closing_balance": money.text(f.closing, self.currency),
        }


@dataclass(frozen=True, slots=True)
class ClosedRow:
    """A ``partner_statements`` row, as the listing needs it."""

    id: int
    currency: str
    period: str
    status: StatementStatus
    figures: Figures
    paid_reference: str | None


def assemble(
    partner_id: int,
    closed: Iterable[ClosedRow],
    sums: Iterable[tuple[str, str, str, Decimal]],
) -> list[Statement]:
    """Every statement of a partner, newest first (then by currency): the closed ones as frozen,
    the months not closed yet computed from ``sums`` ((currency, period, kind, sum) of its lines)."""
    frozen = {(row.currency, row.period): row for row in closed}
    months: dict[tuple[str, str], dict[str, Decimal]] = {}
    for currency, period, kind, total in sums:
        months.setdefault((currency, period), {})[kind] = total
    keys = sorted(set(frozen) | set(months))
    found: list[Statement] = []
    running: dict[str, Decimal] = {}
    for currency, period in keys:
        row = frozen.get((currency, period))
        if row is not None:
            statement = Statement(
                partner_id, currency, period, row.status, row.figures, id=row.id, paid_reference=row.paid_reference
            )
        else:
            figures = figures_of(running.get(currency, ZERO), months.get((currency, period), {}))
            statement = Statement(partner_id, currency, period, StatementStatus.OPEN, figures)
        running[currency] = statement.figures.closing
        found.append(statement)
    found.sort(key=lambda s: (s.period, s.currency), reverse=True)
    return found
