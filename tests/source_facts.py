"""Facts about Python source (imports, ``assert`` statements, writes of ``bookings.status``), read by
parsing it in a fresh interpreter.

Why a subprocess: CPython 3.11.7 sometimes fails ``ast.parse`` of a large module with "SystemError:
AST constructor recursion depth mismatch" once a process has run many other tests (seen on
``db/tables.py`` after the API tests on PostgreSQL); a new interpreter parses it cleanly. So the
tests that check where code lives (tests/unit/test_sql_homes.py, test_packaging.py,
test_sdk_package.py, test_status_writers.py, test_no_runtime_asserts.py) never call ``ast.parse``
themselves: they call ``files_under`` / ``file_facts`` / ``snippet_facts`` here, which run this file
as a script (stdlib only) and read its JSON answer.

Run as a script it reads ``{"paths": [...], "sources": [...]}`` on stdin and prints one object per
path, then per source, in that order.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Import:
    line: int
    module: str  # "a.b" of ``import a.b`` or ``from a.b import c``; "" for ``from . import c``
    level: int  # 0: absolute; 1 for ``from .x import y``, ...
    from_import: bool  # ``from ... import ...`` (else ``import ...``)

    @property
    def top(self) -> str:
        return self.module.split(".")[0]


@dataclass(frozen=True)
class Facts:
    name: str  # the path as given, or "<source N>"
    imports: tuple[Import, ...]
    asserts: tuple[int, ...]  # lines of ``assert`` statements
    status_writes: tuple[int, ...]  # lines that write ``bookings.status`` (see ``_status_writes``)
    # ``(line, name)`` of every call of a function or method named in ``WATCHED_CALLS``
    calls: tuple[tuple[int, str], ...] = ()
    # ``(line, name, annotation)`` of every module-level function's return annotation, as written
    returns: tuple[tuple[int, str, str], ...] = ()


def file_facts(paths: Sequence[Path]) -> list[Facts]:
    """The facts of each file, in the order given."""
    return _run([str(p) for p in paths], [])


@cache
def files_under(root: Path) -> tuple[tuple[Path, Facts], ...]:
    """Every ``*.py`` under ``root`` (sorted) with its facts; one subprocess per root and test process."""
    paths = sorted(root.rglob("*.py"))
    return tuple(zip(paths, file_facts(paths), strict=True))


def snippet_facts(sources: Iterable[str]) -> list[Facts]:
    """The facts of source strings (the scanners' own tests)."""
    return _run([], list(sources))


def _run(paths: list[str], sources: list[str]) -> list[Facts]:
    done = subprocess.run(  # noqa: S603
        [sys.executable, __file__],
        input=json.dumps({"paths": paths, "sources": sources}),
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT_SECONDS,
    )
    if done.returncode != 0:
        raise RuntimeError(f"tests/source_facts.py failed ({done.returncode}): {done.stderr[-2000:]}")
    return [
        Facts(
            f["name"],
            tuple(Import(**i) for i in f["imports"]),
            tuple(f["asserts"]),
            tuple(f["status_writes"]),
            tuple((line, name) for line, name in f["calls"]),
            tuple((line, name, returns) for line, name, returns in f["returns"]),
        )
        for f in json.loads(done.stdout)
    ]


# --- in the subprocess ---------------------------------------------------------------------------------


def _imports(tree: ast.AST) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                {"line": node.lineno, "module": alias.name, "level": 0, "from_import": False} for alias in node.names
            ]
        elif isinstance(node, ast.ImportFrom):
            found.append({"line": node.lineno, "module": node.module or "", "level": node.level, "from_import": True})
    return found


# ``bookings.status`` writes (tests/unit/test_status_writers.py): ``insert(bookings)``; an
# ``update(bookings)`` chain whose ``.values(...)`` sets ``status`` or a mapping it cannot see into;
# SQL text inserting into ``bookings`` or setting its status.
_RAW = re.compile(
    r"\binsert\s+into\s+bookings\b|\bupdate\s+bookings\b[^;]*\bset\b[^;]*\bstatus\b", re.IGNORECASE | re.DOTALL
)


def _is_bookings(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "bookings") or (
        isinstance(node, ast.Attribute) and node.attr == "bookings"
    )


def _dml_on_bookings(node: ast.AST) -> str | None:
    """ "insert"/"update" when ``node`` is ``insert(bookings)`` / ``update(bookings)`` (any spelling)."""
    if isinstance(node, ast.Call) and node.args and _is_bookings(node.args[0]):
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in ("insert", "update"):
            return name
    return None


def _sets_status(values: ast.Call) -> bool:
    if any(k.arg == "status" or k.arg is None for k in values.keywords):  # status=..., **spread
        return True
    for arg in values.args:
        if isinstance(arg, ast.Dict):
            if any(k is None or (isinstance(k, ast.Constant) and k.value == "status") for k in arg.keys):
                return True
        else:
            return True  # a mapping built elsewhere: it may hold "status"
    return False


def _status_writes(tree: ast.AST) -> list[int]:
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _RAW.search(node.value):
            found.append(node.lineno)
        if _dml_on_bookings(node) == "insert":
            found.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "values":
            # walk down the chain ``update(bookings).where(...).values(...)`` to its root call
            root: ast.AST = node.func.value
            while (
                isinstance(root, ast.Call) and _dml_on_bookings(root) is None and isinstance(root.func, ast.Attribute)
            ):
                root = root.func.value
            if _dml_on_bookings(root) == "update" and _sets_status(node):
                found.append(node.lineno)
    return sorted(set(found))


# The calls that make a PostgreSQL fast statement (tests/unit/test_fast_paths_frozen.py): running one
# statement in autocommit or several in one direct transaction, and turning the status change's
# side effects into a statement's rows (``bookings/fast_rows.py``).
WATCHED_CALLS = frozenset({"write_one", "write_all", "fast_plan", "step_ctes"})


def _calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in WATCHED_CALLS:
                found.append((node.lineno, name))
    return sorted(found)


def _returns(tree: ast.Module) -> list[tuple[int, str, str]]:
    return [
        (node.lineno, node.name, ast.unparse(node.returns))
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None
    ]


def _facts(name: str, source: str) -> dict[str, object]:
    tree = ast.parse(source, name)
    return {
        "name": name,
        "imports": _imports(tree),
        "asserts": sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)),
        "status_writes": _status_writes(tree),
        "calls": _calls(tree),
        "returns": _returns(tree),
    }


def _main() -> None:
    request = json.load(sys.stdin)
    answer = [_facts(path, Path(path).read_text(encoding="utf-8")) for path in request["paths"]]
    answer += [_facts(f"<source {i}>", source) for i, source in enumerate(request["sources"])]
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    _main()
