"""The European Central Bank's reference-rate files, read strictly. Pure: bytes in, rates out
(docs/rules/fx.md#ecb-files).

Why our own parser (docs/architecture/dependencies.md#ecb-files): the maintained reader on PyPI
(``currencyconverter``) loads only the history CSV, as floats, into memory with gaps filled in; we
need the daily XML the ECB publishes each day, exact decimals and a refusal, not a guess, for a
file that is truncated or of another shape. The formats are small and fixed:

* XML (daily ``eurofxref-daily.xml``, 90-day and history ``eurofxref-hist.xml``): a
  ``gesmes:Envelope`` whose ``Cube`` holds one ``Cube time="YYYY-MM-DD"`` per day, each holding
  ``Cube currency="USD" rate="1.0420"``.
* CSV (daily ``eurofxref.csv``: ``Date, USD, JPY, ...`` then ``27 November 2026, 1.0420, ...``;
  history ``eurofxref-hist.csv``: ``Date,USD,...`` then ``2026-11-27,1.0420,...,N/A,...``); both
  end each line with a comma, so a line that does not, under a header that does, was cut inside its
  last rate (``1.0`` of ``1.0420``) and the file is refused rather than read with a wrong rate.
* ZIP: the ECB's ``eurofxref.zip`` / ``eurofxref-hist.zip``, holding one such CSV (or XML) file.

Anything else (another root element, a day without rates, a rate that is not a positive decimal, a
header and a row of different lengths, a file cut short, a DOCTYPE) is ``EcbFileError``.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from xml.etree import ElementTree

from transfers.errors import Invalid
from transfers.fx.rates import RateError, parse_rate

MAX_FILE_BYTES = 32 * 1024 * 1024  # the full history XML is ~8 MiB; its ZIP ~0.6 MiB
_GESMES = "http://www.gesmes.org/xml/2002-08-01"
_EUROFXREF = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
_CODE = re.compile(r"\A[A-Z]{3}\Z")
_MISSING = {"N/A", ""}  # the history CSV's "no rate that day" (currencies that joined or left the euro)


class EcbFileError(Invalid):
    """Not an ECB reference-rate file, or a damaged one: the message says what is wrong, in words."""


@dataclass(frozen=True, slots=True)
class EcbFile:
    """The rates of an ECB file by day: ``days[date][currency] = rate`` (EUR -> currency)."""

    kind: str  # "xml" | "csv" | "zip"
    days: dict[date, dict[str, Decimal]]

    @property
    def first(self) -> date:
        return min(self.days)

    @property
    def last(self) -> date:
        return max(self.days)

    @property
    def count(self) -> int:
        return sum(len(rates) for rates in self.days.values())


def parse(data: bytes) -> EcbFile:
    """The file's rates, whatever its kind (sniffed from its first bytes), or ``EcbFileError``."""
    if len(data) > MAX_FILE_BYTES:
        raise EcbFileError(f"the file is {len(data)} bytes, more than an ECB reference file ({MAX_FILE_BYTES})")
    if data.startswith(b"PK\x03\x04"):
        return EcbFile("zip", _zip(data))
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:5]
    if head.startswith(b"<"):
        return EcbFile("xml", _xml(data))
    if head.lower().startswith(b"date"):
        return EcbFile("csv", _csv(data))
    if not data.strip():
        raise EcbFileError("the file is empty")
    raise EcbFileError("not an ECB reference-rate file: expected XML (<gesmes:Envelope>), CSV (Date,...) or a ZIP")


def _zip(data: bytes) -> dict[date, dict[str, Decimal]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise EcbFileError(f"the ZIP file is damaged or cut short: {exc}") from None
    if len(members) != 1 or not members[0].filename.lower().endswith((".csv", ".xml")):
        names = ", ".join(m.filename for m in members[:5]) or "nothing"
        raise EcbFileError(f"an ECB ZIP holds one .csv (or .xml) file; this one holds {names}")
    member = members[0]
    if member.file_size > MAX_FILE_BYTES:
        raise EcbFileError(f"{member.filename} unpacks to {member.file_size} bytes, more than an ECB reference file")
    try:
        inner = archive.read(member)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
        raise EcbFileError(f"the ZIP file is damaged or cut short: {exc}") from None
    return _xml(inner) if member.filename.lower().endswith(".xml") else _csv(inner)


def _xml(data: bytes) -> dict[date, dict[str, Decimal]]:
    # The ECB's files declare no DOCTYPE; one here is not theirs, and entities are not expanded for anyone.
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise EcbFileError("the XML declares a DOCTYPE or entities; an ECB reference file has none")
    try:
        root = ElementTree.fromstring(data)  # noqa: S314 (no DOCTYPE, so no entity expansion; size capped above)
    except ElementTree.ParseError as exc:
        raise EcbFileError(f"the XML is malformed or cut short ({exc})") from None
    if root.tag != f"{{{_GESMES}}}Envelope":
        raise EcbFileError(f"the XML's root is {root.tag!r}, not the ECB's gesmes:Envelope")
    outer = root.find(f"{{{_EUROFXREF}}}Cube")
    if outer is None:
        raise EcbFileError("the XML has no <Cube> of rates")
    days: dict[date, dict[str, Decimal]] = {}
    for cube in outer:
        if cube.tag != f"{{{_EUROFXREF}}}Cube" or "time" not in cube.attrib:
            raise EcbFileError("every <Cube> of the file holds days: <Cube time='YYYY-MM-DD'>")
        day = _iso_day(cube.attrib["time"])
        if day in days:
            raise EcbFileError(f"{day} appears twice in the file")
        rates: dict[str, Decimal] = {}
        for item in cube:
            code, value = item.attrib.get("currency"), item.attrib.get("rate")
            if item.tag != f"{{{_EUROFXREF}}}Cube" or code is None or value is None:
                raise EcbFileError(f"{day}: every rate is <Cube currency='USD' rate='1.0420'/>")
            _put(rates, day, code, value)
        if not rates:
            raise EcbFileError(f"{day} has no rates")
        days[day] = rates
    if not days:
        raise EcbFileError("the file holds no day of rates")
    return days


def _csv(data: bytes) -> dict[date, dict[str, Decimal]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise EcbFileError("the CSV is not UTF-8 text") from None
    rows = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text)) if any(c.strip() for c in row)]
    if not rows:
        raise EcbFileError("the file is empty")
    header = _trim(rows[0])
    if not header or header[0] != "Date" or len(header) < 2:
        raise EcbFileError("the CSV's first line is not the ECB's header (Date, USD, JPY, ...)")
    codes = header[1:]
    for code in codes:
        if not _CODE.match(code):
            raise EcbFileError(f"{code[:10]!r} in the header is not a currency code")
    if len(set(codes)) != len(codes):
        raise EcbFileError("a currency appears twice in the header")
    days: dict[date, dict[str, Decimal]] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = _trim(row)
        if len(cells) != len(header):
            raise EcbFileError(f"line {number} has {len(cells)} cells, the header {len(header)}: the file is damaged")
        if len(row) != len(rows[0]):  # "2026-11-27,1.0" of "2026-11-27,1.0420,": cut inside its last rate
            raise EcbFileError(f"line {number} does not end as the header does (with a comma): the file is cut short")
        day = _csv_day(cells[0], number)
        if day in days:
            raise EcbFileError(f"{day} appears twice in the file")
        rates: dict[str, Decimal] = {}
        for code, value in zip(codes, cells[1:], strict=True):
            if value not in _MISSING:
                _put(rates, day, code, value)
        if not rates:
            raise EcbFileError(f"{day} (line {number}) has no rates")
        days[day] = rates
    if not days:
        raise EcbFileError("the CSV has a header and no day of rates")
    return days


def _trim(row: list[str]) -> list[str]:
    """The ECB ends every CSV line with a comma: one empty last cell is not a column."""
    return row[:-1] if row and row[-1] == "" else row


def _put(rates: dict[str, Decimal], day: date, code: str, value: str) -> None:
    if not _CODE.match(code):
        raise EcbFileError(f"{day}: {code[:10]!r} is not a currency code")
    if code in rates:
        raise EcbFileError(f"{day}: {code} appears twice")
    try:
        rates[code] = parse_rate(value)
    except RateError as exc:
        raise EcbFileError(f"{day} {code}: {exc}") from None


def _iso_day(value: str) -> date:
    try:
        return date.fromisoformat(value) if len(value) == 10 else _bad_day(value)
    except ValueError:
        return _bad_day(value)


def _csv_day(value: str, line: int) -> date:
    """The history file writes ``2026-11-27``, the daily file ``27 November 2026``."""
    if len(value) == 10 and value[4] == "-":
        return _iso_day(value)
    try:
        return datetime.strptime(value, "%d %B %Y").date()
    except ValueError:
        raise EcbFileError(f"line {line}: {value[:20]!r} is not a date like 2026-11-27 or 27 November 2026") from None


def _bad_day(value: str) -> date:
    raise EcbFileError(f"{value[:20]!r} is not a date like 2026-11-27")
