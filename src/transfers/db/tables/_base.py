"""The metadata every table joins, with deterministic constraint names, and the primary-key type."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Integer,
    MetaData,
)

# Deterministic constraint names so Alembic migrations are identical on both databases.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# BigInteger primary keys; SQLite needs INTEGER for its rowid alias, hence with_variant.
PK = BigInteger().with_variant(Integer(), "sqlite")
