"""Canaries for the private library state the service still relies on (docs/architecture/private-apis.md).

Each touch point kept is a name a library does not promise to keep. When an upgrade removes or changes
one, its canary here fails first, saying which library, which version the project pins, what is gone and
what to do, instead of the search, the SQLite store or the direct routes failing somewhere deeper.
"""

from __future__ import annotations

import inspect
import sqlite3
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from fastapi import FastAPI
from pydantic_core import SchemaValidator, core_schema
from sqlalchemy import column, select, table
from sqlalchemy.dialects import postgresql, sqlite
from starlette.requests import Request

from transfers.partners.wire import NUL_FREE_SEARCH_ANSWER, WireSearchAnswer, WireVehicle

PAGE = "docs/architecture/private-apis.md"
VEHICLE: dict[str, Any] = {
    "id": "v1",
    "make": "Mercedes",
    "model": "E",
    "type": "SEDAN",
    "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 1},
    "price": 45.1,
    "currency": "EUR",
    "extras": [{"id": "x1", "name": "Child seat", "price": 4.0, "pricing_type": "PER_ITEM"}],
}


def _pinned(distribution: str) -> str:
    """The version pyproject.toml pins ``distribution`` to, and the one installed when they differ."""
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    pins = [d for d in pyproject["project"]["dependencies"] if d.lower().startswith(distribution.lower())]
    pin = next((p.split("==", 1)[1] for p in pins if "==" in p), "unpinned")
    installed = version(distribution)
    return pin if installed == pin else f"{pin} (installed: {installed})"


def _gone(distribution: str, what: str, where: str, instead: str) -> str:
    return (
        f"{distribution} {_pinned(distribution)} no longer has {what}, which {where} relies on. "
        f"Either pin the last version that has it, or {instead}; then update {PAGE}."
    )


def test_pydantic_core_schema_validator_takes_use_prebuilt() -> None:
    """partners/wire.py: ``SchemaValidator(schema, _use_prebuilt=False)`` builds the NUL-free search-answer
    validator from the model's core schema without reusing the nested models' own validators."""
    try:
        validator = SchemaValidator(core_schema.str_schema(), _use_prebuilt=False)
    except TypeError as exc:
        pytest.fail(
            _gone(
                "pydantic-core",
                f"SchemaValidator's _use_prebuilt argument ({exc})",
                "partners/wire.py's NUL_FREE_SEARCH_ANSWER",
                "validate every answer with WireSearchAnswer itself (fanout.validated) and drop the NUL-free "
                "validator (about 30 k instructions more per partner answer)",
            )
        )
    assert validator.validate_python("x") == "x"
    body = {"vehicles": [dict(VEHICLE, make="a\x00b")]}
    if NUL_FREE_SEARCH_ANSWER.validate_python(body).vehicles[0].make != "a\x00b":  # pragma: no cover
        pytest.fail(
            _gone(
                "pydantic-core",
                "a working _use_prebuilt=False (the nested models' own validators, callbacks included, were reused)",
                "partners/wire.py's NUL_FREE_SEARCH_ANSWER",
                "validate every answer with WireSearchAnswer itself and drop the NUL-free validator",
            )
        )


def test_a_pydantic_model_keeps_its_fields_in_its_dict() -> None:
    """search/offers.py ``build_offers`` reads a validated wire vehicle's fields from its ``__dict__`` (~190
    instructions a read against ~470 through pydantic's attribute hook, ~25 reads per vehicle)."""
    vehicle = WireSearchAnswer.model_validate({"vehicles": [VEHICLE]}).vehicles[0]
    fields = vars(vehicle)
    if not isinstance(vehicle, WireVehicle) or set(fields) != set(WireVehicle.model_fields):
        pytest.fail(
            _gone(
                "pydantic",
                "a model's fields in its instance __dict__",
                "search/offers.py's build_offers",
                "read the fields as attributes (quote.price, ...)",
            )
        )
    assert fields["capacity"].__dict__["passengers"] == 3 and fields["currency"] == "EUR"


def test_aiosqlite_connection_has_its_sqlite3_connection_and_its_queue() -> None:
    """db/engine.py ``Database.sqlite_write``: ``driver._conn`` (the ``sqlite3.Connection``) used on
    aiosqlite's worker thread, inside a function queued with ``driver._execute(fn)``: a search's store on
    SQLite is one trip to that thread instead of four."""
    conn_attr = inspect.getattr_static(aiosqlite.Connection, "_conn", None)
    execute = getattr(aiosqlite.Connection, "_execute", None)
    if not isinstance(conn_attr, property) or execute is None or not inspect.iscoroutinefunction(execute):
        pytest.fail(
            _gone(
                "aiosqlite",
                "Connection._conn (a property) and the coroutine Connection._execute(fn)",
                "db/engine.py's Database.sqlite_write",
                "store a search through the engine's own transaction (Database.write) on SQLite",
            )
        )
    parameters = list(inspect.signature(execute).parameters)
    assert parameters[:2] == ["self", "fn"], _gone(
        "aiosqlite", f"_execute(self, fn, ...) (it is now {parameters})", "Database.sqlite_write", "adapt the call"
    )


@pytest.mark.process  # opens an SQLite database (in memory)
async def test_aiosqlite_runs_a_function_on_its_thread_with_its_connection() -> None:
    async with aiosqlite.connect(":memory:") as driver:
        seen: list[Any] = []

        def work() -> int:
            db = driver._conn
            seen.append(db)
            return int(db.execute("SELECT 41 + 1").fetchone()[0])

        assert await driver._execute(work) == 42, _gone(  # type: ignore[no-untyped-call]
            "aiosqlite", "Connection._execute(fn) returning fn()", "Database.sqlite_write", "see above"
        )
        assert isinstance(seen[0], sqlite3.Connection)


def test_fastapi_has_its_native_telemetry_switch() -> None:
    """api/direct_routes.py ``DirectApp``: the direct routes skip FastAPI's layers only while
    ``self._native_telemetry.enabled()`` says FastAPI's OpenTelemetry would do nothing."""
    app = FastAPI()
    native = getattr(app, "_native_telemetry", None)
    enabled = getattr(native, "enabled", None)
    if not callable(enabled):
        pytest.fail(
            _gone(
                "fastapi",
                "FastAPI._native_telemetry.enabled()",
                "api/direct_routes.py's DirectApp",
                "send the direct routes through FastAPI when telemetry may be on (e.g. only when the app is "
                "built with telemetry={'tracing': False, 'metrics': False, 'logs': False}), or drop them",
            )
        )
    assert enabled() is False  # no OpenTelemetry provider configured in the tests


@pytest.mark.parametrize("dialect", [postgresql.asyncpg.dialect(), sqlite.pysqlite.dialect()])  # type: ignore[no-untyped-call]
def test_sqlalchemy_compiled_statement_gives_its_parameter_order_and_binds(dialect: Any) -> None:
    """db/direct.py ``DirectStatement.compiled``: the compiled statement's ``string``, ``positiontup`` (the
    parameters' order), ``binds`` and each bind's ``required`` / ``effective_value``: the SQL and parameters
    the direct statements run below SQLAlchemy's execution layer (GET booking, the create)."""
    t = table("t", column("a"), column("b"))
    statement = select(t.c.a).where(t.c.a == 1, t.c.b == 2)
    compiled = statement.compile(dialect=dialect)
    order = getattr(compiled, "positiontup", None)
    binds = getattr(compiled, "binds", None)
    if not order or not isinstance(binds, dict) or any(name not in binds for name in order):
        pytest.fail(
            _gone(
                "SQLAlchemy",
                "a compiled statement's positiontup and binds",
                "db/direct.py's DirectStatement",
                "run those statements through the engine (Database.read / write)",
            )
        )
    assert [binds[name].effective_value for name in order] == [1, 2]
    assert not any(binds[name].required for name in order)
    assert isinstance(compiled.string, str) and "FROM t" in compiled.string


def test_starlette_keeps_request_state_in_the_scope_s_state_dict() -> None:
    """api/deps.py, api/ratelimit.py, api/middleware.py: ``request.state.x = v`` and
    ``scope.setdefault("state", {})["x"] = v`` are one write (the plumbing reads the client, partner and
    reservation, the rate limiter its decision, straight from the scope's ``"state"`` dict, without a
    ``Request`` or a ``State`` per request)."""
    scope: dict[str, Any] = {"type": "http", "headers": []}
    request = Request(scope)
    request.state.partner_id = 7
    scope.setdefault("state", {})["client_id"] = 3
    if scope.get("state", {}).get("partner_id") != 7 or getattr(request.state, "client_id", None) != 3:
        pytest.fail(
            _gone(
                "starlette",
                "request.state stored in the scope's 'state' dict",
                "api/deps.py, api/ratelimit.py and api/middleware.py",
                "set and read those values through request.state (a Request built from the scope where the "
                "plumbing has none)",
            )
        )
