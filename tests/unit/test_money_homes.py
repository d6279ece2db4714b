"""Amounts are rounded and written in one place, ``money.py`` (docs/architecture/money.md): a scan of
the package's code and templates that fails when anything else formats an amount with two fixed
decimals or quantizes to cents, which is how a 2-decimal assumption creeps back in."""

from __future__ import annotations

import re
from pathlib import Path

import transfers

PACKAGE = Path(transfers.__file__).parent
HOME = PACKAGE / "money.py"
# What writing or rounding money by hand looks like: a fixed two-place format (f-string, %-format,
# format(), a Jinja "%.2f"|format), a cents constant, or a rounding mode picked outside money.py.
# Coordinates' "%.5f" and a distance's one decimal are not money and do not match.
FORBIDDEN = re.compile(
    r"""(:[,_]?\.2f\b|%\.2f|["']\.2f["']|["'],\.2f["']|\bCENTS?\b|Decimal\(["']0\.01["']\)|ROUND_HALF_(UP|EVEN|DOWN)|quantize\(\s*Decimal\(["']0\.0?1["']\))"""
)
# Checked by hand: these match the pattern without being money.
EXEMPT = {
    # a distance in km written with two decimals on the ride page of the console
    ("console/templates/bookings/detail.html", '{{ "%.2f"|format(n.km_from_pickup)'),
}


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".html", ".txt", ".j2") and p != HOME)


def test_nothing_but_money_py_writes_or_rounds_amounts() -> None:
    found = []
    for path in _sources():
        relative = path.relative_to(PACKAGE).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FORBIDDEN.search(line) and not any(relative == f and snippet in line for f, snippet in EXEMPT):
                found.append(f"{relative}:{number}: {line.strip()[:120]}")
    assert found == [], "write amounts with money.text, round with money.round_half_up:\n" + "\n".join(found)


def test_the_scan_sees_what_it_forbids() -> None:
    for line in [
        'f"{amount:.2f}"',
        'f"{amount:,.2f} EUR"',
        '{{ "%.2f"|format(b.total) }}',
        'format(amount, ".2f")',
        "amount.quantize(CENT)",
        'amount.quantize(Decimal("0.01"))',
        "value.quantize(q, rounding=ROUND_HALF_UP)",
        'CENT = Decimal("0.01")',
    ]:
        assert FORBIDDEN.search(line), line
    for line in ['"%.5f"|format(lat)', "round(km, 1)", "money.text(amount, currency)", 'quantize(Decimal("0.001"))']:
        assert not FORBIDDEN.search(line), line
    assert "quantize" in HOME.read_text(encoding="utf-8") and "ROUND_HALF_UP" in HOME.read_text(encoding="utf-8")
