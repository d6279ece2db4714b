"""ECB reference-rate files in the ECB's own shapes (daily and history; XML, CSV and ZIP), built from
rates the test names, so a test reads what it checks. The shapes follow the files the ECB publishes:
``eurofxref-daily.xml``, ``eurofxref-hist.xml``, ``eurofxref.csv`` (in ``eurofxref.zip``) and
``eurofxref-hist.csv`` (in ``eurofxref-hist.zip``)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from datetime import date

Days = Mapping[date, Mapping[str, str]]

_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
"""


def xml(days: Days) -> bytes:
    """The XML file (one day: the daily file; several: the 90-day or history file), newest day first."""
    parts = [_HEAD]
    for day in sorted(days, reverse=True):
        parts.append(f"\t\t<Cube time='{day.isoformat()}'>\n")
        parts += [f"\t\t\t<Cube currency='{c}' rate='{r}'/>\n" for c, r in days[day].items()]
        parts.append("\t\t</Cube>\n")
    parts.append("\t</Cube>\n</gesmes:Envelope>")
    return "".join(parts).encode()


def daily_csv(day: date, rates: Mapping[str, str]) -> bytes:
    """``eurofxref.csv``: a header and one line, a space after each comma, a comma at each line's end."""
    header = "Date, " + ", ".join(rates) + ", "
    line = f"{day.day:02d} {day.strftime('%B %Y')}, " + ", ".join(rates.values()) + ", "
    return f"{header}\n{line}\n".encode()


def history_csv(days: Days) -> bytes:
    """``eurofxref-hist.csv``: every currency of any day in the header, ``N/A`` where a day has none."""
    codes = sorted({c for rates in days.values() for c in rates})
    lines = ["Date," + ",".join(codes) + ","]
    for day in sorted(days, reverse=True):
        lines.append(day.isoformat() + "," + ",".join(days[day].get(c, "N/A") for c in codes) + ",")
    return ("\n".join(lines) + "\n").encode()


def zipped(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return out.getvalue()
