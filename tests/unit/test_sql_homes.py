"""The CLI, the scheduled jobs and the metrics scrape hold no SQL of their own: statements live in
the repository of the package that owns the table (issue 12, item 6), so a column change is made
in one place. The CLI parses and prints, the jobs decide what to do and when."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.source_facts import files_under

SOURCE = Path(__file__).resolve().parents[2] / "src" / "transfers"


@pytest.mark.parametrize("package", ["cli", "jobs", "observability"])
def test_no_sql_outside_repositories(package: str) -> None:
    offenders = []
    for path, facts in files_under(SOURCE / package):
        for imp in facts.imports:
            if imp.top == "sqlalchemy" or (imp.from_import and imp.module == "transfers.db.tables"):
                spelled = f"from {imp.module}" if imp.from_import else "import sqlalchemy"
                offenders.append(f"{path.relative_to(SOURCE)}:{imp.line} {spelled}")
    assert offenders == []
