"""Repositories answer typed rows (docs/architecture/index.md#source-scans): in every package of
``src/transfers`` (found by walking the source: a package added tomorrow is scanned without editing
this file), no public function of a repository module (``repository.py``, ``*_repository.py``,
``queries.py``, ``*_queries.py``: the SQL homes of tests/unit/test_sql_homes.py), nor of any other
module that builds statements (its exemptions), is annotated to
return a mapping (``dict[str, Any]``, ``Mapping``, a SQLAlchemy ``Row`` or ``RowMapping``), alone or
in a list, tuple or Optional. Give it a row type instead (``transfers/rows.row_type``, e.g.
``wallet/ledger.LedgerEntry``). ``dict[str, Any]`` stays where JSON enters or leaves (``as_dict`` /
``public`` of the rows, payload builders) and in private helpers, which answer no caller.
A source scan (tests/source_facts.py); the exemptions are below, each with its reason, and one that
no longer holds fails too.
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

from tests.source_facts import files_under, snippet_facts
from tests.unit.test_sql_homes import HOME, SQL_PACKAGES, sql_lines

SRC = Path(__file__).resolve().parents[2] / "src" / "transfers"
# (module path below src/transfers or a glob, function or glob) -> why it answers a mapping.
EXEMPT = {
    # a JSON document as stored: its keys are the published schema's (openapi/rate-card.schema.json;
    # ratecards/card.py validates and parses it), not columns
    ("ratecards/repository.py", "get_card"): "the rate card, a JSON document as stored",
    ("ratecards/repository.py", "cards_of"): "the rate cards, JSON documents as stored",
    # The frozen fast statements' bind parameters, by the statements' names (docs/architecture/reliability.md)
    ("*", "*_params"): "a frozen fast statement's bind parameters, by its names: not a row",
    ("bookings/client_queries.py", "list_bookings"): "the use case's answer: the API's JSON page (data, next_cursor)",
    ("partners/health_repository.py", "minute_rows"): "the minute's counters, one column per outcome and "
    "latency bound (db/tables/health.py makes them from lists): read by tests and diagnostics only",
    # Left for later (larger: the routes and templates read these rows by key):
    ("agency/*queries.py", "*"): "the agency pages' rows, handed to their templates as read",
    ("requestlog/repository.py", "page"): "the agency's request log page, handed to its template as read",
}
# SQLAlchemy's Row is generic (mypy --strict refuses it bare): a bare ``Row`` is a class of ours.
MAPPING = re.compile(r"\bdict\[str, Any\]|\bMapping\b|\bRowMapping\b|\bRow\[|\bdict\[str, object\]")


def untyped(returns: tuple[tuple[int, str, str], ...]) -> list[tuple[str, str]]:
    """``(name, "name (line n): -> annotation")`` of each public function annotated to return a mapping."""
    return [
        (name, f"{name} (line {line}): -> {annotation}")
        for line, name, annotation in returns
        if MAPPING.search(annotation) and not name.startswith("_")
    ]


def offenders(root: Path) -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    """Every repository module under ``root`` with the functions that answer a mapping, and the
    ``EXEMPT`` entries that were used."""
    found: dict[str, list[str]] = {}
    used: set[tuple[str, str]] = set()
    for path, facts in files_under(root):
        relative = path.relative_to(root)
        if relative.parts[0] in SQL_PACKAGES or not (HOME.search(relative.name) or sql_lines(facts)):
            continue
        for name, said in untyped(facts.returns):
            exempt = [(p, f) for p, f in EXEMPT if fnmatch(str(relative), p) and fnmatch(name, f)]
            if exempt:
                used.update(exempt)
            else:
                found.setdefault(str(relative), []).append(said)
    return found, used


def test_repositories_return_typed_rows() -> None:
    found, used = offenders(SRC)
    assert found == {}, "answer a row type (transfers/rows.row_type), not a mapping"
    assert set(EXEMPT) - used == set(), (
        "answered typed now: take it out of EXEMPT in tests/unit/test_repository_rows.py"
    )


def test_a_package_added_tomorrow_is_scanned(tmp_path: Path) -> None:
    """A source tree built here, with a package no list names: its repository's mapping is found."""
    (tmp_path / "feature").mkdir()
    (tmp_path / "feature" / "repository.py").write_text(
        "async def listed(conn) -> list[dict[str, Any]]: ...\n"
        "def _values(row) -> dict[str, Any]: ...\n"  # a private helper answers no caller
        "async def one(conn) -> Booking | None: ...\n",
        encoding="utf-8",
    )
    (tmp_path / "feature" / "service.py").write_text("def payload() -> dict[str, Any]: ...\n", encoding="utf-8")
    found, _ = offenders(tmp_path)
    assert found == {"feature/repository.py": ["listed (line 1): -> list[dict[str, Any]]"]}


def test_the_scan_sees_mapping_returns() -> None:
    sources = [
        "async def a(c) -> dict[str, Any] | None: ...",
        "def b() -> list[Mapping[str, Any]]: ...",
        "async def c() -> Sequence[RowMapping]: ...",
        "def d() -> Row[Any]: ...",
        "async def e() -> list[LedgerEntry]: ...",
        "class X:\n    def as_dict(self) -> dict[str, Any]: ...",
        "def f() -> dict[int, Booking]: ...",
        "def g() -> Row: ...",  # a class of ours (ops/doctor.Row): SQLAlchemy's takes parameters
    ]
    assert [bool(untyped(f.returns)) for f in snippet_facts(sources)] == [True] * 4 + [False] * 4
