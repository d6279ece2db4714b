"""Column types for money and instants that behave the same on PostgreSQL and SQLite.

* ``Money``: an exact amount of any currency (docs/architecture/money.md#storing): ``NUMERIC(18,4)``
  on PostgreSQL (four places: ISO 4217's largest minor unit). SQLite has no exact decimal type (its
  NUMERIC affinity turns "45.10" into a binary float), so there the same column holds the integer
  amount x 10^4. Nothing is rounded either way: a value with more than four decimals, or more than
  14 integer digits, is refused on bind; Python reads a ``Decimal`` with four places back (45.1000),
  which ``money.text`` writes with its currency's decimals. ``SUM()`` stays exact on both.
* ``UTCDateTime``: ``TIMESTAMP WITH TIME ZONE`` on PostgreSQL; on SQLite a UTC string. Values
  written must be timezone-aware; values read are always aware (UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, DateTime, Numeric
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from transfers import money


class Money(TypeDecorator[Decimal]):
    impl = Numeric(18, money.STORED_PLACES)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(BigInteger())
        return dialect.type_descriptor(Numeric(18, money.STORED_PLACES, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        amount = money.stored(value)
        if dialect.name == "sqlite":
            return int(amount.scaleb(money.STORED_PLACES))
        return amount

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        if dialect.name == "sqlite":
            return Decimal(int(value)).scaleb(-money.STORED_PLACES)
        return Decimal(value)


class UTCDateTime(TypeDecorator[datetime]):
    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError("UTCDateTime needs a timezone-aware datetime")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # raw SQLite text, e.g. from a func expression
            value = datetime.fromisoformat(value)
        instant: datetime = value
        if instant.tzinfo is None:
            return instant.replace(tzinfo=UTC)
        return instant.astimezone(UTC)
