"""The layers contract (pyproject.toml, checked by ``lint-imports``) and the page that describes it
(docs/architecture/index.md, "Import rules") name the same packages in the same layers, in the
same order, so the page stays true when a package is added or moves; and the contract stays
exhaustive, so a package added tomorrow fails ``lint-imports`` until it is placed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LAYERS_CONTRACT = "the layers of transfers, each importing only its own and the ones below it"


def _contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    found: list[dict[str, Any]] = [c for c in config["contracts"] if c["name"] == LAYERS_CONTRACT]
    assert len(found) == 1, f"pyproject.toml has no contract named {LAYERS_CONTRACT!r}"
    return found[0]


def contract_layers() -> list[list[str]]:
    """Each layer's packages, highest layer first (an optional ``(name)`` without its brackets)."""
    return [[name.strip(" ()\n") for name in re.split(r"[:|]", layer)] for layer in _contract()["layers"]]


def documented_layers() -> list[list[str]]:
    """The packages column of the layers table under "Import rules", highest first."""
    page = (ROOT / "docs" / "architecture" / "index.md").read_text(encoding="utf-8")
    section = page[page.index("### Import rules") : page.index("### Source scans")]
    rows = [line for line in section.splitlines() if line.strip().startswith("|")][2:]  # no header, no rule
    return [re.findall(r"`(\w+)`", row.split("|")[2]) for row in rows]


def test_the_layers_contract_is_exhaustive_over_transfers() -> None:
    contract = _contract()
    assert (contract["type"], contract["containers"], contract["exhaustive"]) == ("layers", ["transfers"], True)


def test_the_page_lists_the_contracts_layers() -> None:
    assert documented_layers() == contract_layers(), (
        "docs/architecture/index.md (Import rules) and pyproject.toml's layers contract disagree: change both together"
    )


def test_every_package_sits_in_one_layer() -> None:
    placed = [name for layer in contract_layers() for name in layer]
    assert len(placed) == len(set(placed))
    source = ROOT / "src" / "transfers"
    present = {p.stem for p in source.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in source.glob("*/__init__.py")
    }
    assert present <= set(placed), f"not in the layers contract (pyproject.toml): {sorted(present - set(placed))}"
