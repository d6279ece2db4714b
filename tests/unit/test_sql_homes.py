"""The CLI, the scheduled jobs and the metrics scrape hold no SQL of their own: statements live in
the repository of the package that owns the table (issue 12, item 6), so a column change is made
in one place. The CLI parses and prints, the jobs decide what to do and when."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "transfers"


@pytest.mark.parametrize("package", ["cli", "jobs", "observability"])
def test_no_sql_outside_repositories(package: str) -> None:
    offenders = []
    for path in sorted((SOURCE / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module.split(".")[0] == "sqlalchemy" or node.module == "transfers.db.tables"):
                offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlalchemy" for a in node.names):
                offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} import sqlalchemy")
    assert offenders == []
