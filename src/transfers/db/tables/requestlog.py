"""The request log (docs/rules/agency-portal.md#request-log, migration 0019): one row per
client API request, written in batches by ``requestlog/`` and kept 7 days.

What a row never holds: a body, a header's value other than the request and idempotency ids, an
API key, a query string. ``path`` is the request's path only (cut to ``MAX_PATH_CHARS``)."""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, SmallInteger, String, Table

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

MAX_PATH_CHARS = 500
MAX_METHOD_CHARS = 16
MAX_REQUEST_ID_CHARS = 128
MAX_IDEMPOTENCY_KEY_CHARS = 255

# No foreign key to clients: the rows are written off the request path in batches and read only
# per client; a check per inserted row would buy nothing (a client is never deleted).
api_requests = Table(
    "api_requests",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_id", PK, nullable=False),
    Column("at", UTCDateTime, nullable=False),  # when the request arrived
    Column("method", String(MAX_METHOD_CHARS), nullable=False),
    Column("path", String(MAX_PATH_CHARS), nullable=False),
    Column("status", SmallInteger, nullable=False),  # 0: no answer was started (the client went away)
    Column("request_id", String(MAX_REQUEST_ID_CHARS), nullable=False),
    Column("idempotency_key", String(MAX_IDEMPOTENCY_KEY_CHARS), nullable=True),
    Column("duration_us", Integer, nullable=False),
    # The portal's page: one client's requests, newest first (and its keyset pages).
    Index("ix_api_requests_client_at", "client_id", "at", "id"),
    # The retention job: the oldest rows of every client.
    Index("ix_api_requests_at", "at"),
)
