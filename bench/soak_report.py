"""The soak's report (``bench/soak.py``): the invariants' table, the evidence of a failed one, the
latency of each operation before, during and after the faults, and figures that are not invariants."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any

from bench.soak_checks import Check
from bench.soak_load import Attempt, Booked
from bench.soak_world import Slot


def delayed_flights(journal: list[Booked], data: dict[str, Any]) -> str:
    """A figure, not an invariant: how many bookings on a late sandbox flight (``ZZ1mmm``) have their
    pickup moved by exactly ``mmm`` minutes. A check at creation that met a fault is retried at the
    watch's next slot, which for a pickup days ahead is after the run: such a booking is listed, not
    failed."""
    by_no = {b["reservation_no"]: b for b in data["bookings"]}
    followed, waiting = 0, []
    for booked in journal:
        if booked.kind != "delayed" or booked.status != 200:
            continue
        row = by_no[booked.reservation_nos[0]]
        moved = (row["pickup_at"] - row["original_pickup_at"]).total_seconds() / 60
        if moved == int(booked.flight[3:]):
            followed += 1
        else:
            waiting.append(f"{row['reservation_no']} ({row['status']}, {booked.flight}: moved {moved:.0f} min)")
    text = f"{followed} of {followed + len(waiting)} bookings on a late flight have the pickup moved with it"
    return text + (f"; not (yet): {', '.join(waiting[:5])}" if waiting else "")


def redis_outages(slots: list[Slot]) -> int:
    """How many times an API process noticed Redis gone (its rate limiter then runs on its own buckets)."""
    count = 0
    for slot in slots:
        with contextlib.suppress(OSError):
            count += slot.log.read_text(errors="replace").count('"rate_limit_redis_unavailable"')
    return count


def latencies(attempts: list[Attempt], first_fault: float, last_fault_end: float) -> list[str]:
    """p50 / p99 in ms per operation, before, during and after the faults (answered requests)."""
    phases: dict[tuple[str, str], list[float]] = defaultdict(list)
    for a in attempts:
        if not isinstance(a.status, int) or a.status >= 500 or a.op == "setup":
            continue
        phase = "before" if a.sent < first_fault else "during" if a.sent < last_fault_end else "after"
        phases[(a.op, phase)].append(a.took * 1000)
    lines = [
        "| operation | before p50 / p99 (n) | during p50 / p99 (n) | after p50 / p99 (n) |",
        "|---|---:|---:|---:|",
    ]
    for op in sorted({op for op, _ in phases}):
        cells = []
        for phase in ("before", "during", "after"):
            values = sorted(phases.get((op, phase), []))
            if not values:
                cells.append("-")
                continue
            p50 = values[len(values) // 2]
            p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
            cells.append(f"{p50:.0f} / {p99:.0f} ms ({len(values)})")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    return lines


def table(checks: list[Check]) -> list[str]:
    lines = ["| invariant | holds | figures |", "|---|---|---|"]
    for check in checks:
        lines.append(f"| {check.name} | {'yes' if check.ok else '**NO**'} | {check.figure} |")
    return lines


def evidence(checks: list[Check], limit: int = 15) -> list[str]:
    lines = []
    for check in checks:
        if check.ok:
            continue
        lines.append(f"FAILED: {check.name}")
        lines += [f"  - {item}" for item in check.evidence[:limit]]
        if len(check.evidence) > limit:
            lines.append(f"  ... and {len(check.evidence) - limit} more")
    return lines
