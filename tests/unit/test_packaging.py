"""Every third-party package src/transfers imports is declared in pyproject.toml, and the airport
dataset has one loader (items 6 and 7).

A package that only arrives as another one's dependency can disappear with that one's next
release (PyYAML came with schemathesis, referencing with jsonschema), and the service then fails
at import time on a machine that installed it fresh.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from tests.source_facts import files_under

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "transfers"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = set()
    for requirement in project["dependencies"]:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        assert match, requirement
        names.add(_normalized(match.group(0)))
    return names


def _imported_top_level_modules() -> dict[str, str]:
    """Top-level module name -> one file importing it, for every absolute import in src/transfers."""
    found: dict[str, str] = {}
    for path, facts in files_under(SOURCE):
        for imp in facts.imports:
            if imp.level == 0 and imp.module:
                found.setdefault(imp.top, str(path.relative_to(ROOT)))
    return found


def undeclared_imports(declared: set[str]) -> list[str]:
    distributions = packages_distributions()
    problems = []
    for module, where in sorted(_imported_top_level_modules().items()):
        if module in sys.stdlib_module_names or module == "transfers":
            continue
        owners = distributions.get(module)
        if not owners:
            problems.append(f"{module} (imported by {where}) is not installed at all")
        elif not {_normalized(owner) for owner in owners} & declared:
            problems.append(f"{module} (imported by {where}) comes from {', '.join(owners)}, not in pyproject")
    return problems


def test_every_imported_third_party_package_is_declared() -> None:
    assert undeclared_imports(_declared()) == []


def test_the_check_sees_an_undeclared_import() -> None:
    """The check itself works: PyYAML taken out of the declared set is reported."""
    problems = undeclared_imports(_declared() - {"pyyaml"})
    where = "src/transfers/partners/conformance/contract.py"
    assert len(problems) == 1 and problems[0].startswith(f"yaml (imported by {where})")


def test_the_airport_dataset_has_one_loader() -> None:
    """Only reference/airports.py loads airportsdata; the sandbox partner and the CLI use its copy."""
    loaders = sorted(
        str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*.py") if "airportsdata" in p.read_text(encoding="utf-8")
    )
    assert loaders == ["reference/airports.py"]
    from transfers.reference import airports
    from transfers.sandbox_partner import fleet

    assert fleet.dataset is airports.dataset and fleet.great_circle_km is airports.great_circle_km
    airports.dataset.cache_clear()
    airports.find_airport.cache_clear()
    assert fleet.coordinates({"type": "AIRPORT", "iata_code": "lhr"}) is not None
    assert airports.find_airport("CDG") is not None
    assert airports.dataset.cache_info().misses == 1  # one load served both
