"""Column types for money and instants that behave the same on PostgreSQL and SQLite.

* ``Money``: ``NUMERIC(14,2)`` on PostgreSQL. SQLite has no exact decimal type (its NUMERIC
  affinity turns "45.10" into a binary float), so there the same column holds integer cents.
  Either way Python only ever sees ``Decimal`` with two places, and ``SUM()`` stays exact.
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

CENT = Decimal("0.01")


class Money(TypeDecorator[Decimal]):
    impl = Numeric(14, 2)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(BigInteger())
        return dialect.type_descriptor(Numeric(14, 2, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        amount = Decimal(value).quantize(CENT)
        if dialect.name == "sqlite":
            return int(amount * 100)
        return amount

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        if dialect.name == "sqlite":
            return (Decimal(int(value)) / 100).quantize(CENT)
        return Decimal(value).quantize(CENT)


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
