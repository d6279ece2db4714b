"""The repository functions of the converted packages answer typed rows (issue 21): none is
annotated to return a mapping (``dict[str, Any]``, ``Mapping``, a SQLAlchemy ``Row`` or
``RowMapping``), alone or in a list, tuple or Optional. A source scan (tests/source_facts.py):
adding such a function to one of these modules fails here; give it a row type instead
(``transfers/rows.row_type``, e.g. ``wallet/ledger.LedgerEntry``). ``dict[str, Any]`` stays where
JSON enters or leaves (``as_dict`` / ``public`` of the rows, payload builders)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.source_facts import file_facts, snippet_facts

SRC = Path(__file__).resolve().parents[2] / "src" / "transfers"
CONVERTED = (
    "auth/repository.py",
    "bookings/repository.py",
    "client_events/repository.py",
    "clients/repository.py",
    "console/admin_queries.py",
    "console/delivery_queries.py",
    "console/queries.py",
    "delivery/operators.py",
    "delivery/repository.py",
    "hosted/repository.py",
    "operators/repository.py",
    "ratecards/repository.py",
    "reference/repository.py",
    "wallet/repository.py",
    "webauth/repository.py",
    "webhooks/repository.py",
)
# Functions whose answer is a JSON document as stored (its keys are the published schema's, not
# columns): the rate card (openapi/rate-card.schema.json; ratecards/card.py validates and parses it).
JSON_DOCUMENTS = {
    ("ratecards/repository.py", "get_card"),
    ("ratecards/repository.py", "cards_of"),
    # The bind parameters of a frozen fast statement (issue 21 item 6), by the statement's names: not a row.
    ("webhooks/repository.py", "record_params"),
}
MAPPING = re.compile(r"\bdict\[str, Any\]|\bMapping\b|\bRowMapping\b|\bRow\b|\bdict\[str, object\]")


def untyped(returns: tuple[tuple[int, str, str], ...], path: str = "") -> list[str]:
    return [
        f"{name} (line {line}): -> {annotation}"
        for line, name, annotation in returns
        if MAPPING.search(annotation) and (path, name) not in JSON_DOCUMENTS
    ]


def test_converted_repositories_return_typed_rows() -> None:
    found = {
        path: untyped(facts.returns, path)
        for path, facts in zip(CONVERTED, file_facts([SRC / p for p in CONVERTED]), strict=True)
    }
    assert {path: names for path, names in found.items() if names} == {}


def test_the_scan_sees_mapping_returns() -> None:
    sources = [
        "async def a(c) -> dict[str, Any] | None: ...",
        "def b() -> list[Mapping[str, Any]]: ...",
        "async def c() -> Sequence[RowMapping]: ...",
        "def d() -> Row[Any]: ...",
        "async def e() -> list[LedgerEntry]: ...",
        "class X:\n    def as_dict(self) -> dict[str, Any]: ...",
        "def f() -> dict[int, Booking]: ...",
    ]
    assert [bool(untyped(f.returns)) for f in snippet_facts(sources)] == [True, True, True, True, False, False, False]
