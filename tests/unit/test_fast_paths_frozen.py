"""The PostgreSQL fast paths are frozen at the two statements that were measured:
``fast_paths.store_created`` (the create) and ``fast_paths.finish_acknowledged`` (the partner's
usual answer), docs/operations/performance-history.md#profile change 13. A source scan, not behaviour: it fails when a
third statement runs by ``Database.write_one`` (one statement in autocommit) or ``Database.write_all``
(several in one transaction on a direct connection) or composes the status change's side effects
into a statement's rows (``fast_rows.fast_plan`` / ``fast_rows.step_ctes``) anywhere but there.

The create statement also runs once per leg of a return trip, in one transaction
(``fast_paths.store_created_many``, the one ``write_all``): the same frozen SQL, no third
statement. Why: the pair through the general path cost 2.87x one create's CPU (8.08 / 2.82 ms,
target 1.6x, docs/operations/performance-history.md#return-trips); the pair written both ways has its own equivalence
test.

Why frozen: the side effects' rows are computed once, in Python, for both paths
(``bookings/effect_rows.py``), but each fast statement is still a second way to write the booking row
itself and to gate its effects on it, kept equal by a test (tests/integration/test_fast_paths_equal.py
compares every row, one test per statement). A new
write takes the general path; a third fast statement needs a measurement that shows it matters, its
own equivalence test, and this list changed on purpose.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.source_facts import files_under, snippet_facts

SRC = Path(__file__).resolve().parents[2] / "src" / "transfers"

# path under src/transfers -> how many calls of each name it holds
ALLOWED = {
    # ``store_created`` and ``finish_acknowledged`` by ``write_one``; ``store_created_many`` (a return trip's
    # legs) runs the create statement once per leg by ``write_all``; ``fast_plan``: the create's
    # (``_created_step``, shared by both) and the acknowledgement's, each with its ``step_ctes``.
    "bookings/fast_paths.py": {"write_one": 2, "write_all": 1, "fast_plan": 2, "step_ctes": 2},
    # ``write_one_unflushed`` runs ``write_one`` (searches: not a booking write, not durable).
    "db/engine.py": {"write_one": 1},
}


def test_only_the_two_measured_fast_statements_exist() -> None:
    found: dict[str, dict[str, int]] = {}
    for path, facts in files_under(SRC):
        if facts.calls:
            found[str(path.relative_to(SRC))] = dict(Counter(name for _, name in facts.calls))
    assert found == ALLOWED, (
        "a PostgreSQL fast statement was added or moved: new booking writes take the general path "
        "(bookings/lifecycle); see this test's docstring"
    )


def test_the_scan_sees_calls_by_method_and_by_name() -> None:
    seen = snippet_facts(
        [
            "await db.write_one(S, a=1)",
            "step_ctes(shape, b, w); fast_rows.fast_plan(steps)",
            "write_one",
            "await db.write_all([(S, {})])",
        ]
    )
    assert [f.calls for f in seen] == [
        ((1, "write_one"),),
        ((1, "fast_plan"), (1, "step_ctes")),
        (),
        ((1, "write_all"),),
    ]
