"""Reference data (vehicle types, segments, services, cancellation reasons), seeded by migration 0002."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Integer,
    String,
    Table,
    Text,
)

from transfers.db.tables._base import PK, metadata

vehicle_types = Table(
    "vehicle_types",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("max_passengers", Integer, nullable=True),
)

vehicle_segments = Table(
    "vehicle_segments",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
)

car_services = Table(
    "car_services",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
)

cancellation_reasons = Table(
    "cancellation_reasons",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=True),
    Column("position", Integer, nullable=False),
    Column("active", Boolean, nullable=False, server_default="1"),
)
