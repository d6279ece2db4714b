"""How the soak (bench/soak.py) judges what it saw: which 5xx a fault excuses, what RSS growth is,
and that a failure names its evidence. Pure functions over recorded figures; the soak itself runs
in CI (`make soak`)."""

from __future__ import annotations

from pathlib import Path

from bench.soak_checks import Check, Window, in_window, memory, server_errors
from bench.soak_load import Attempt
from bench.soak_report import evidence, latencies
from bench.soak_world import Slot

CUT = [Window("pg_terminate_backend", 100.0, 102.0)]


def _attempt(sent: float, status: int | str, code: str | None = None, took: float = 0.1, op: str = "get") -> Attempt:
    return Attempt(op, sent, took, status, code, 0)


def test_a_request_in_flight_when_the_fault_struck_is_the_faults() -> None:
    assert in_window(99.3, CUT, took=0.8)  # sent before, answered after the cut
    assert not in_window(99.3, CUT, took=0.5)  # answered before it
    assert in_window(106.9, CUT)  # within the 5 s of grace
    assert not in_window(107.1, CUT)


def test_only_503_unavailable_inside_a_window_and_no_5xx_outside() -> None:
    fine = server_errors([_attempt(101.0, 503, "UNAVAILABLE"), _attempt(50.0, 200), _attempt(101.5, "ReadError")], CUT)
    assert fine.ok and "0 5xx outside" in fine.figure and "1 cut off" in fine.figure
    inside_500 = server_errors([_attempt(101.0, 500, "INTERNAL_ERROR", op="ride_event")], CUT)
    assert (
        not inside_500.ok
        and "ride_event at 101.0s (api-1): 500 INTERNAL_ERROR in a fault window" in inside_500.evidence
    )
    outside_503 = server_errors([_attempt(20.0, 503, "UNAVAILABLE")], CUT)
    assert not outside_503.ok and "outside the fault windows" in outside_503.evidence[0]


def _slot(samples: list[tuple[float, float]], pid: int = 7) -> Slot:
    slot = Slot("api-1", [], {}, None, Path("/nonexistent"))
    slot.rss = [(t, pid, mib) for t, mib in samples]
    slot.popens = [type("P", (), {"pid": pid})()]  # type: ignore[list-item]
    return slot


def test_rss_growth_is_judged_over_the_second_half_of_the_live_process() -> None:
    flat = _slot([(t, 150.0 + t / 100) for t in range(0, 120, 5)])
    assert memory([flat], half=60, end=120).ok
    leaking = _slot([(t, 150.0 if t < 60 else 150.0 + (t - 60)) for t in range(0, 120, 5)])
    judged = memory([leaking], half=60, end=120)
    assert not judged.ok and "api-1: RSS" in judged.evidence[0]
    restarted_late = _slot([(t, 150.0) for t in range(80, 120, 5)])
    assert not memory([restarted_late], half=60, end=120).ok


def test_a_failed_invariant_prints_its_evidence_and_the_latency_table_has_each_phase() -> None:
    lines = evidence([Check("x", False, "", ["TB-1: debits [] for total 40.00"]), Check("y", True, "")])
    assert lines == ["FAILED: x", "  - TB-1: debits [] for total 40.00"]
    table = latencies([_attempt(1.0, 200, took=0.02), _attempt(101.0, 200), _attempt(150.0, 422)], 100.0, 102.0)
    assert table[2] == "| get | 20 / 20 ms (1) | 100 / 100 ms (1) | 100 / 100 ms (1) |"
