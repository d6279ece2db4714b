"""The one domain error tree (``transfers/errors.py``) stays one tree.

* No two exception classes of ``transfers`` share a name: a handler, a log line or a reader that
  says ``NotFound`` means one class.
* The domain packages raise only ``DomainError`` subclasses (found by reading every ``raise`` of
  their modules), so the API, the console and portal, and the CLI each render every failure a use
  case reports from one mapping. The few exceptions are bugs' guards and what a library demands
  (pydantic validators raise ``ValueError``), listed below with their reasons.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

import transfers
from transfers.errors import Conflict, DomainError, Invalid, NotFound, Refused, Unavailable

ROOT = Path(__file__).resolve().parents[2]

DOMAIN_PACKAGES = (
    "auth",
    "bookings",
    "cancellation",
    "clients",
    "hosted",
    "idempotency",
    "operators",
    "partners",
    "reference",
    "search",
    "wallet",
    "webhooks",
)
SKIPPED = ("transfers.migrations",)  # Alembic scripts, loaded by Alembic only
# (module, exception): raised for a bug or because a library wants exactly that type; never a
# failure a surface has to render.
NOT_DOMAIN = {
    # invariant guards: a caller broke the function's contract (a bug, answered 500)
    ("transfers.bookings.effects", "ValueError"),  # a fast acknowledgement's change asked for its booking
    ("transfers.bookings.effect_rows", "ValueError"),  # a batch of changes names one booking twice
    ("transfers.bookings.fast_rows", "ValueError"),  # a shape with a wallet move built without the wallet's CTE
    ("transfers.bookings.lifecycle", "ValueError"),  # update_details_many given one booking twice
    ("transfers.bookings.return_trip", "LookupError"),  # as bookings.service: a leg gone right after its write
    ("transfers.bookings.return_trip", "RuntimeError"),  # as bookings.service: no free reservation numbers
    ("transfers.bookings.service", "LookupError"),
    ("transfers.bookings.partner_answers", "TypeError"),
    ("transfers.partners.calls", "ValueError"),  # a stored message kind this code does not know
    # SharedDeadline: a call past its deadline sees TimeoutError, as under asyncio.timeout; the client
    # turns it into the "timeout" outcome, nothing outside the client sees it
    ("transfers.partners.client", "TimeoutError"),
    ("transfers.bookings.service", "RuntimeError"),
    ("transfers.cancellation.policy", "ValueError"),
    ("transfers.partners.service", "ValueError"),
    ("transfers.partners.rotation", "ValueError"),
    ("transfers.partners.editing", "LookupError"),
    ("transfers.wallet.ledger", "ValueError"),
    # pydantic validators (and the form parsers shared with them) must raise ValueError
    ("transfers.bookings.reverse", "ValueError"),
    ("transfers.partners.wire", "ValueError"),
    ("transfers.partners.fields", "ValueError"),
    ("transfers.wallet.amounts", "ValueError"),
    # the repository's signal of a lost insert race, turned into INCIDENT_EXISTS by incidents.service
    ("transfers.bookings.incidents.repository", "DuplicateIncident"),
    # json.loads(parse_constant=...) hook: its ValueError is caught a line later
    ("transfers.idempotency.fingerprint", "ValueError"),
}


def all_modules() -> list[ModuleType]:
    modules = [transfers]
    for info in pkgutil.walk_packages(transfers.__path__, "transfers."):
        if not info.name.startswith(SKIPPED):
            modules.append(importlib.import_module(info.name))
    return modules


def exception_classes(module: ModuleType) -> list[type[BaseException]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
    ]


def test_no_two_exception_classes_share_a_name() -> None:
    homes: dict[str, list[str]] = {}
    for module in all_modules():
        for cls in exception_classes(module):
            homes.setdefault(cls.__name__, []).append(f"{cls.__module__}.{cls.__qualname__}")
    shared = {name: where for name, where in homes.items() if len(where) > 1}
    assert not shared, shared
    assert len(homes) > 30  # the walk found the code base's exceptions


def _resolve(module: ModuleType, node: ast.expr) -> object:
    """What a ``raise`` names: ``X``, ``mod.X`` or ``mod.sub.X`` in the module's namespace; None for a
    local variable (``raise exc``), which re-raises something caught."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.insert(0, node.id)
    value: object = vars(module).get(parts[0], getattr(builtins, parts[0], None))
    for part in parts[1:]:
        value = getattr(value, part, None)
    return value


def _raised_type(module: ModuleType, raised: ast.expr) -> type | str | None:
    """The class a ``raise`` raises: a class called or named, or the return type of a factory
    function (``raise not_found()``); None when it re-raises a variable."""
    target = raised.func if isinstance(raised, ast.Call) else raised
    value = _resolve(module, target)
    if inspect.isclass(value):
        return value
    if inspect.isfunction(value):
        returned = typing.get_type_hints(value).get("return")
        return returned if inspect.isclass(returned) else f"{value.__name__}() -> {returned!r}"
    if value is None and isinstance(target, ast.Name):
        return None  # a local name: re-raising what was caught
    return f"unresolved {ast.unparse(target)}"


def domain_raise_offenders() -> tuple[int, list[str]]:
    """How many ``raise`` statements of the domain packages were judged, and those that raise no DomainError."""
    offenders: list[str] = []
    checked = 0
    for module in all_modules():
        package = module.__name__.split(".")[1] if "." in module.__name__ else ""
        if package not in DOMAIN_PACKAGES or module.__file__ is None:
            continue
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            raised = _raised_type(module, node.exc)
            if raised is None:
                continue
            checked += 1
            if isinstance(raised, type) and issubclass(raised, DomainError):
                continue
            name = raised.__name__ if isinstance(raised, type) else raised
            if (module.__name__, name) not in NOT_DOMAIN:
                offenders.append(f"{module.__name__}:{node.lineno}: raise {name}")
    return checked, offenders


@pytest.mark.process
def test_the_domain_packages_raise_only_domain_errors() -> None:
    # Parsed in a fresh interpreter: CPython 3.11.7's ast.parse can fail with "AST constructor recursion
    # depth mismatch" in a process that has run many other tests (seen here after the PostgreSQL suite;
    # tests/source_facts.py says more).
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from tests.unit.test_error_tree import domain_raise_offenders as f; print(json.dumps(f()))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    checked, offenders = json.loads(child.stdout.splitlines()[-1])
    assert checked > 100, checked
    assert not offenders, "raise a transfers.errors.DomainError subclass instead:\n" + "\n".join(offenders)


def test_every_meaning_is_a_domain_error_and_a_code_gives_its_message() -> None:
    for meaning in (NotFound, Refused, Conflict, Invalid, Unavailable):
        assert issubclass(meaning, DomainError)
        plain = meaning()
        assert (plain.code, plain.message) == (None, meaning.default_message)
    told = Refused("Give a reason.")
    assert (told.code, told.message, str(told)) == (None, "Give a reason.", "Give a reason.")
