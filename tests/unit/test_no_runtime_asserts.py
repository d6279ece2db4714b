"""No ``assert`` guards a request path in src/: ``python -O`` strips them, and a failed one is an
AssertionError with no message for the operator. The code raises a specific error or handles the
None instead (issue 12, item 7). The files below still have some, each for the reason given."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "transfers"
STILL_ASSERTING = {
    "outbox/dispatcher.py": "being rewritten on branch i12-core (the flat dispatcher)",
    "migrations/env.py": "Alembic's start-up, no request",
    "partners/service.py": "the sandbox partner's start-up registration, no request",
}


def test_no_assert_statements_in_the_service() -> None:
    found = set()
    for path in sorted(SOURCE.rglob("*.py")):
        if any(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))):
            found.add(str(path.relative_to(SOURCE)))
    assert found - STILL_ASSERTING.keys() == set()
