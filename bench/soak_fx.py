"""The soak's several currencies (``bench/soak.py``, docs/operations/reliability.md#invariants): the FX
position the bookings imply, computed from the bookings' own amounts, against ``transfers fx position``.

A converted booking (its partner quotes in another currency than the booking's) moves money between
currencies through the FX accounts (docs/rules/fx.md#books), one journal entry per partner line:

* ``RIDE``: ``+net_total`` into the FX account of the booking's currency, ``-partner_net_total`` out of
  the one of the partner's;
* ``CANCELLATION_FEE`` of a kept ``fee``: ``+fee x net_total / total`` (half-up in the booking's
  currency) in, ``-fee x partner_net_total / total`` (half-up in the partner's) out;
* any other partner line (``RECOVERY``): its FX legs are minus its platform leg (booking's currency)
  and minus its partner leg (partner's currency).

The invariant: every FX line is on such an entry of a converted booking, each entry's FX legs are
exactly those, and ``transfers fx position`` is, per currency, their sum.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.soak_checks import Check
from bench.soak_world import TRANSFERS_BIN
from transfers import money
from transfers.db.engine import Database
from transfers.db.tables import bookings, journal_entries, journal_lines

ZERO = Decimal(0)


async def position(env: dict[str, str], workdir: Path) -> dict[str, Decimal]:
    """``transfers fx position --json``, on the soak's database."""
    proc = await asyncio.create_subprocess_exec(
        str(TRANSFERS_BIN),
        "fx",
        "position",
        "--json",
        env=env,
        cwd=workdir,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    output, errors = await asyncio.wait_for(proc.communicate(), timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"transfers fx position: exit {proc.returncode}: {errors.decode(errors='replace')[-500:]}")
    return {a["currency"]: Decimal(a["balance"]) for a in json.loads(output)["accounts"]}


async def _lines(db: Database) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """Each booking's amounts, and each entry with lines on a booking: its kind and its legs."""
    b, e, line = bookings.c, journal_entries.c, journal_lines.c
    async with db.read() as conn:
        rows = await conn.execute(
            select(b.id, b.reservation_no, b.currency, b.partner_currency, b.total, b.net_total).add_columns(
                b.partner_net_total, b.cancellation_fee
            )
        )
        booked = {r.id: dict(r._mapping) for r in rows}
        legs = await conn.execute(
            select(e.id, e.kind, e.booking_id, line.account, line.currency, line.amount)
            .select_from(journal_lines.join(journal_entries, journal_entries.c.id == line.entry_id))
            .order_by(e.id)
        )
        entries: dict[int, dict[str, Any]] = {}
        for entry_id, kind, booking_id, account, currency, amount in legs:
            entry = entries.setdefault(entry_id, {"kind": kind, "booking_id": booking_id, "legs": defaultdict(Decimal)})
            entry["legs"][(account, currency)] += Decimal(amount)
    return booked, entries


def converted(booking: dict[str, Any]) -> bool:
    return bool(booking["partner_currency"]) and booking["partner_currency"] != booking["currency"]


def expected_legs(booking: dict[str, Any], kind: str, legs: dict[tuple[str, str], Decimal]) -> dict[str, Decimal]:
    """The FX legs a converted booking's partner-line entry must have (the module's docstring)."""
    mine, theirs = booking["currency"], booking["partner_currency"]
    total, net, own = (Decimal(booking[k]) for k in ("total", "net_total", "partner_net_total"))
    if kind == "RIDE":
        return {mine: net, theirs: -own}
    if kind == "CANCELLATION_FEE":
        fee = Decimal(booking["cancellation_fee"] or 0)
        return {
            mine: money.round_half_up(fee * net / total, mine),
            theirs: -money.round_half_up(fee * own / total, theirs),
        }
    return {mine: -legs.get(("platform", mine), ZERO), theirs: -legs.get(("partner", theirs), ZERO)}


async def check(db: Database, env: dict[str, str], workdir: Path) -> Check:
    booked, entries = await _lines(db)
    problems = []
    implied: dict[str, Decimal] = defaultdict(Decimal)
    kinds: dict[str, int] = defaultdict(int)
    for entry_id, entry in entries.items():
        fx = {cur: amount for (account, cur), amount in entry["legs"].items() if account == "fx"}
        booking = booked.get(entry["booking_id"]) if entry["booking_id"] is not None else None
        if booking is None or not converted(booking):
            if any(fx.values()):
                problems.append(f"entry {entry_id} {entry['kind']}: FX legs {fx} on no converted booking")
            continue
        if not fx and entry["kind"] not in ("RIDE", "CANCELLATION_FEE", "RECOVERY"):
            continue  # the client's side (debit, refund) stays in the booking's currency
        wanted = expected_legs(booking, entry["kind"], entry["legs"])
        got = {cur: fx.get(cur, ZERO) for cur in wanted}
        if got != wanted or set(fx) - set(wanted):
            problems.append(
                f"{booking['reservation_no']} entry {entry_id} {entry['kind']}: FX legs {_show(fx)}, "
                f"expected {_show(wanted)}"
            )
        for cur, amount in wanted.items():
            implied[cur] += amount
        kinds[entry["kind"]] += 1
    try:
        answered = await position(env, workdir)
    except (RuntimeError, ValueError, KeyError) as exc:
        answered = {}
        problems.append(str(exc))
    for cur in sorted(set(implied) | set(answered)):
        if answered.get(cur, ZERO) != implied.get(cur, ZERO):
            problems.append(
                f"FX position in {cur}: `transfers fx position` {answered.get(cur)}, "
                f"bookings imply {implied.get(cur, ZERO)}"
            )
    pairs: dict[str, int] = defaultdict(int)
    for b in booked.values():
        if converted(b):
            pairs[f"{b['partner_currency']}->{b['currency']}"] += 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(pairs.items()))
    figure = (
        f"{sum(pairs.values())} converted bookings of {len(booked)} ({shown}), "
        f"{sum(kinds.values())} partner lines through FX "
        f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or 'none'}); position "
        + (", ".join(f"{c} {money.text(v, c)}" for c, v in sorted(answered.items())) or "empty")
    )
    return Check("the FX position is what the converted bookings imply", not problems, figure, problems)


def _show(legs: dict[str, Decimal]) -> str:
    return "{" + ", ".join(f"{c} {money.text(v, c)}" for c, v in sorted(legs.items())) + "}"
