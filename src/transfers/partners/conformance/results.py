"""What a conformance run produces: one ``Check`` per call (its verdict, timing and why), the
``Report`` that the CLI prints as a table or JSON and the console stores in the audit log, and the
``Deadlines`` every check is timed against.

They live apart from the checks so that the readers of a report (``cli/partners.py``,
``partners/editing.py``, the console's partner page) depend on these plain data classes only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Verdict = Literal["PASS", "FAIL", "SKIP"]


@dataclass(frozen=True)
class Deadlines:
    """Seconds each call may take (PARTNER_API.md 3): search 3 s, first create attempt 2 s,
    later create attempts, info and update 3 s."""

    search: float = 3.0
    create: float = 2.0
    other: float = 3.0

    def wait(self, deadline: float) -> float:
        """How long to keep listening: past the deadline too, to report how late an answer is."""
        return deadline + max(deadline, 1.0)


@dataclass
class Check:
    """One row of the report: a call, its verdict, and (when not PASS) the reason a partner's
    developer needs to fix it; on PASS a short note of what was seen, so a pass is checkable too."""

    name: str
    method: str
    path: str
    result: Verdict
    duration_ms: float | None = None
    deadline_ms: float | None = None
    http_status: int | None = None
    reason: str | None = None  # why it failed or was skipped
    note: str | None = None  # what was seen when it passed

    @property
    def detail(self) -> str | None:
        return self.reason if self.result != "PASS" else self.note


@dataclass
class Report:
    """Every check of one run, in the order they ran. ``passed`` only when there is at least one
    check and none failed or was skipped: a skipped check proved nothing."""

    base_url: str
    airport: str
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reservation_no: str | None = None  # the test booking's number (TB-CHECK...), when create was tried

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.result == "PASS" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "airport": self.airport,
            "passed": self.passed,
            "reservation_no": self.reservation_no,
            "summary": {verdict: sum(c.result == verdict for c in self.checks) for verdict in ("PASS", "FAIL", "SKIP")},
            "checks": [asdict(c) for c in self.checks],
            "warnings": list(self.warnings),
        }
