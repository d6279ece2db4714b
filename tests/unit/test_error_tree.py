"""The one domain error tree (``transfers/errors.py``) stays one tree.

* No two exception classes of ``transfers`` share a name: a handler, a log line or a reader that
  says ``NotFound`` means one class.
* Every package of ``transfers`` raises only ``DomainError`` subclasses (found by reading every
  ``raise`` of every module, packages found by walking the source: a package added tomorrow is
  scanned without editing this file), so the API, the console and portal, and the CLI each render
  every failure a use case reports from one mapping. The exemptions are the few packages that are
  no use case's (``NOT_SCANNED``) and single raises that are a bug's guard, what a library
  demands or a surface's signal to its framework (``NOT_DOMAIN``), each with its reason. An
  exemption no raise needs any more fails too, so the list stays as short as the code allows.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
import re
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

import transfers
from tests.source_facts import file_facts
from transfers.errors import Conflict, DomainError, Invalid, NotFound, Refused, Unavailable

# Packages (below ``transfers``) whose raises are not judged, and why.
NOT_SCANNED = {
    "migrations": "Alembic's scripts, loaded by Alembic only (never imported as modules of the service)",
    "db": "the database layer raises the driver's and SQLAlchemy's errors; repositories and use cases translate them",
    "sandbox_partner": "a stand-in partner's own HTTP server: what it raises are a partner's answers, not ours",
    "cli": "the command line renders DomainError (cli/errors.py) and speaks click: BadParameter, SystemExit",
}

# (module below ``transfers``, exception) -> why that raise is no failure a surface has to render.
NOT_DOMAIN = {
    ("bookings.effects", "ValueError"): "a bug's guard: a fast acknowledgement's change asked for its booking",
    ("bookings.effects_repository", "ValueError"): "a bug's guard: a batch of changes names one booking twice",
    ("bookings.fast_rows", "ValueError"): "a bug's guard: a wallet move's shape built without the wallet's CTE",
    ("bookings.lifecycle", "ValueError"): "a bug's guard: update_details_many given one booking twice",
    ("returns.service", "LookupError"): "a broken database: a leg gone right after its write",
    ("returns.service", "RuntimeError"): "a broken database: no free reservation numbers",
    ("bookings.service", "LookupError"): "a broken database: a booking gone right after its creation",
    ("bookings.service", "RuntimeError"): "a broken database: no free reservation numbers",
    ("bookings.partner_answers", "TypeError"): "a bug's guard: a create's answer of another type",
    ("tracking.repository", "RuntimeError"): "a broken database: a driver link gone right after its write",
    ("accounting.journal", "Unbalanced"): "a bug's guard: an entry whose legs do not add up is never written",
    ("rows", "TypeError"): "a row type built with fields it has not: a bug, as a dataclass says it",
    ("delivery.kinds", "ValueError"): "a bug at start-up: one delivery kind registered twice",
    ("delivery.kinds", "UnknownKind"): "a stored message of a kind no one registered: the engine parks it",
    ("deliveries", "ValueError"): "a bug at start-up: one delivery kind name registered in two queues",
    ("delivery.models", "ValueError"): "a bug's guard: a partner call's message without its booking or partner",
    ("delivery.repository", "ValueError"): "a bug's guard: a message written for no recipient",
    ("partners.calls", "ValueError"): "a stored message kind this code does not know",
    # SharedDeadline: a call past its deadline sees TimeoutError, as under asyncio.timeout
    ("partners.client", "TimeoutError"): "the client turns it into the timeout outcome; nothing outside sees it",
    ("smtp", "SmtpFailure"): "an SMTP exchange's outcome: the e-mail deliveries turn it into a retry or a failure",
    ("cancellation.policy", "ValueError"): "a bug's guard: a naive time (every caller passes aware ones)",
    ("partners.service", "ValueError"): "a bug's guard: a partner status the callers' choices do not hold",
    ("partners.rotation", "ValueError"): "a bug's guard: a negative overlap (the CLI refuses one first)",
    ("partners.editing", "LookupError"): "a broken dataset: a registered airport missing from the airports",
    ("wallet.ledger", "ValueError"): "a bug's guard: an amount the callers have already checked",
    ("fx.rates", "ValueError"): "a bug's guard: a rate asked from a currency to itself (no conversion)",
    (
        "messages.text.rendering",
        "ValueError",
    ): "a bug's guard: a template on a channel it never goes on, or feedback without its link",
    # pydantic validators (and the form parsers shared with them) must raise ValueError
    ("config", "ValueError"): "pydantic's settings validators must raise ValueError",
    ("bookings.reverse", "ValueError"): "pydantic validators must raise ValueError",
    ("partners.wire", "ValueError"): "pydantic validators must raise ValueError",
    ("partners.fields", "ValueError"): "the form parsers pydantic's validators share must raise ValueError",
    ("wallet.amounts", "ValueError"): "the form parsers pydantic's validators share must raise ValueError",
    ("money", "MoneyError"): "a ValueError: the amount parser pydantic's validators and the forms share",
    ("money", "TypeError"): "a bug's guard: Money combined with a number, as Python's own operators say",
    ("money", "UnknownCurrency"): "a ValueError (a MoneyError): the currency parser the validators share",
    ("incidents.repository", "DuplicateIncident"): "a lost insert race, turned into INCIDENT_EXISTS",
    ("ratings.repository", "DuplicateRating"): "a lost insert race, turned into RATING_EXISTS",
    ("idempotency.fingerprint", "ValueError"): "json.loads(parse_constant=...) hook: caught a line later",
    # the surfaces' own signals to their framework, never a use case's failure
    ("api.middleware", "BodyTooLarge"): "the body limit's signal, caught by the plumbing around it (413)",
    ("api.direct_routes", "LookupError"): "a bug at start-up: a direct route that has no FastAPI twin",
    ("api.direct_routes", "ValueError"): "a bug at start-up: a direct route whose FastAPI twin takes parameters",
    ("api.responses", "TypeError"): "json.dumps(default=...) hook: what JSON cannot hold, as json demands",
    ("console.routes.bookings", "_Mismatch"): "a private signal, caught in its module: the form names another booking",
    ("console.routes.partners", "ValueError"): "the form parser's ValueError, caught beside it",
    ("webauth.viewer", "SignInRequired"): "the pages' redirect to the sign-in page (webauth/http.py answers it)",
}


def all_modules(package: ModuleType = transfers) -> list[ModuleType]:
    """The package and every module below it (Alembic's scripts left out)."""
    modules = [package]
    skipped = f"{package.__name__}.migrations"
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if not info.name.startswith(skipped):
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


DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _raised_type(module: ModuleType, written: str) -> type | str | None:
    """The class a ``raise`` raises, from what it names (``X``, ``mod.X``, ``mod.sub.X`` in the
    module's namespace): a class, or the return type of a factory function (``raise not_found()``);
    None when it re-raises a local variable (``raise exc``)."""
    if not DOTTED.fullmatch(written):
        return f"unresolved {written}"
    first, *rest = written.split(".")
    value: object = vars(module).get(first, getattr(builtins, first, None))
    for part in rest:
        value = getattr(value, part, None)
    if inspect.isclass(value):
        return value
    if inspect.isfunction(value):
        returned = typing.get_type_hints(value).get("return")
        return returned if inspect.isclass(returned) else f"{value.__name__}() -> {returned!r}"
    if value is None and not rest:
        return None  # a local name: re-raising what was caught
    return f"unresolved {written}"


def domain_raise_offenders(package: ModuleType = transfers) -> tuple[int, list[str], set[tuple[str, str]]]:
    """How many ``raise`` statements were judged, those that raise no DomainError, and the
    ``NOT_DOMAIN`` exemptions that were used (module names relative to ``package``)."""
    offenders: list[str] = []
    used: set[tuple[str, str]] = set()
    checked = 0
    modules = [
        m
        for m in all_modules(package)
        if m.__file__ is not None
        and m.__name__.removeprefix(package.__name__).removeprefix(".").split(".")[0] not in NOT_SCANNED
    ]
    for module, facts in zip(modules, file_facts([Path(m.__file__ or "") for m in modules]), strict=True):
        relative = module.__name__.removeprefix(package.__name__).removeprefix(".")
        for line, written in facts.raises:
            raised = _raised_type(module, written)
            if raised is None:
                continue
            checked += 1
            if isinstance(raised, type) and issubclass(raised, DomainError):
                continue
            name = raised.__name__ if isinstance(raised, type) else raised
            if (relative, name) in NOT_DOMAIN:
                used.add((relative, name))
            else:
                offenders.append(f"{module.__name__}:{line}: raise {name}")
    return checked, offenders, used


def test_every_package_raises_only_domain_errors() -> None:
    checked, offenders, used = domain_raise_offenders()
    assert checked > 300, checked  # the walk found the code base's raises
    assert not offenders, (
        "raise a transfers.errors.DomainError subclass instead (or, for a bug's guard or a library's "
        "demand, add the raise to NOT_DOMAIN in tests/unit/test_error_tree.py with its reason):\n"
        + "\n".join(offenders)
    )
    stale = sorted(set(NOT_DOMAIN) - used)
    assert not stale, f"no raise needs these exemptions any more: take them out of NOT_DOMAIN: {stale}"


TOMORROW = {
    "__init__.py": "",
    "errors.py": "from transfers.errors import Refused\n",
    "feature/__init__.py": "",
    "feature/service.py": (
        "from transfers.errors import Refused\n"
        "def decide(ok: bool) -> None:\n"
        "    if not ok:\n"
        "        raise ValueError('no')\n"
        "    raise Refused('not now')\n"
    ),
    "cli/__init__.py": "",
    "cli/main.py": "def main() -> None:\n    raise SystemExit(2)\n",
}


def test_a_package_added_tomorrow_is_scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source tree built here, with a package no list names: its stray ``raise`` is found."""
    for relative, source in TOMORROW.items():
        (tmp_path / "tomorrow" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tomorrow" / relative).write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        checked, offenders, _ = domain_raise_offenders(importlib.import_module("tomorrow"))
    finally:
        for name in [n for n in sys.modules if n == "tomorrow" or n.startswith("tomorrow.")]:
            del sys.modules[name]
    assert checked == 2  # the command line's raise is not judged
    assert offenders == ["tomorrow.feature.service:4: raise ValueError"]


def test_every_meaning_is_a_domain_error_and_a_code_gives_its_message() -> None:
    for meaning in (NotFound, Refused, Conflict, Invalid, Unavailable):
        assert issubclass(meaning, DomainError)
        plain = meaning()
        assert (plain.code, plain.message) == (None, meaning.default_message)
    told = Refused("Give a reason.")
    assert (told.code, told.message, str(told)) == (None, "Give a reason.", "Give a reason.")
