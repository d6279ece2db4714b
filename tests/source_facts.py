"""Facts about Python source (imports, ``assert`` statements, writes of ``bookings.status``, return
annotations), read by parsing it: the source scans (tests/unit/test_sql_homes.py, test_repository_rows.py,
test_status_writers.py, test_error_tree.py, test_packaging.py, ...) read code through ``files_under`` /
``file_facts`` / ``snippet_facts`` here, never by calling ``ast.parse`` themselves.

They parse in the test's own process (pure, so they run in ``make test-fast`` and before every landing:
all of src/transfers in about a quarter of a second) through ``parse``, which works around a CPython
3.11.7 bug: ``ast.parse`` can fail with "SystemError: AST constructor recursion depth mismatch" when
another thread builds an AST at the same moment (the converter's depth counter is shared by the
interpreter's threads; https://github.com/python/cpython/issues/106905, fixed in 3.11.8). Parsing is
deterministic, so a parse that fails that way is simply parsed again.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PARSE_ATTEMPTS = 5


@dataclass(frozen=True)
class Import:
    line: int
    module: str  # "a.b" of ``import a.b`` or ``from a.b import c``; "" for ``from . import c``
    level: int  # 0: absolute; 1 for ``from .x import y``, ...
    from_import: bool  # ``from ... import ...`` (else ``import ...``)
    names: tuple[str, ...] = ()  # what ``from ... import`` takes (``c`` of ``from a.b import c as d``)
    type_checking: bool = False  # under ``if TYPE_CHECKING:`` (no import at run time)

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
    # lines of string constants that are SQL text, as this code base writes it (``SQL_TEXT``)
    sql_texts: tuple[int, ...] = ()
    # ``(line, what)`` of every ``raise X`` / ``raise X(...)``: ``what`` is ``X`` as written (the
    # called expression of a call); a bare ``raise`` is not listed
    raises: tuple[tuple[int, str], ...] = ()


def parse(source: str, name: str = "<source>") -> ast.Module:
    """``ast.parse``, parsed again when CPython 3.11.7's spurious SystemError strikes (module docstring)."""
    for attempt in range(PARSE_ATTEMPTS):
        try:
            return ast.parse(source, name)
        except SystemError as error:
            if "recursion depth mismatch" not in str(error) or attempt == PARSE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def file_facts(paths: Sequence[Path]) -> list[Facts]:
    """The facts of each file, in the order given."""
    return [_file_facts(path, path.stat().st_mtime_ns) for path in paths]


@cache
def _file_facts(path: Path, _mtime_ns: int) -> Facts:
    return _facts(str(path), path.read_text(encoding="utf-8"))


def files_under(root: Path) -> tuple[tuple[Path, Facts], ...]:
    """Every ``*.py`` under ``root`` (sorted) with its facts (each file parsed once per process)."""
    paths = sorted(root.rglob("*.py"))
    return tuple(zip(paths, file_facts(paths), strict=True))


def snippet_facts(sources: Iterable[str]) -> list[Facts]:
    """The facts of source strings (the scanners' own tests)."""
    return [_facts(f"<source {i}>", source) for i, source in enumerate(sources)]


# --- the facts ---------------------------------------------------------------------------------------


def _type_checking_lines(nodes: list[ast.AST]) -> set[int]:
    """The lines of the ``if TYPE_CHECKING:`` blocks (their imports do not run)."""
    lines: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(nodes: list[ast.AST]) -> list[Import]:
    guarded = _type_checking_lines(nodes)
    found: list[Import] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name, 0, False, (), node.lineno in guarded) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            found.append(Import(node.lineno, node.module or "", node.level, True, names, node.lineno in guarded))
    return sorted(found, key=lambda i: i.line)


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


def _status_writes(nodes: list[ast.AST]) -> list[int]:
    found: list[int] = []
    for node in nodes:
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


def _calls(nodes: list[ast.AST]) -> list[tuple[int, str]]:
    found = []
    for node in nodes:
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


# SQL text starts with a statement's keywords in capitals (tests/unit/test_sql_homes.py); prose does not.
SQL_TEXT = re.compile(r"^\s*(SELECT\b|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|WITH\s+\w+\s+AS\b)")


def _sql_texts(nodes: list[ast.AST]) -> list[int]:
    return sorted(
        {
            node.lineno
            for node in nodes
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.match(node.value)
        }
    )


def _raises(nodes: list[ast.AST]) -> list[tuple[int, str]]:
    found = []
    for node in nodes:
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            found.append((node.lineno, ast.unparse(target)))
    return sorted(found)


def _facts(name: str, source: str) -> Facts:
    tree = parse(source, name)
    nodes = list(ast.walk(tree))  # walked once: each fact reads the list
    return Facts(
        name,
        tuple(_imports(nodes)),
        tuple(sorted(n.lineno for n in nodes if isinstance(n, ast.Assert))),
        tuple(_status_writes(nodes)),
        tuple(_calls(nodes)),
        tuple(_returns(tree)),
        tuple(_sql_texts(nodes)),
        tuple(_raises(nodes)),
    )
