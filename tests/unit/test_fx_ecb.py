"""The ECB reference files read strictly (docs/rules/fx.md#ecb-files): the daily and history files in
XML, CSV and ZIP give exact rates by day; a file malformed, cut short or of another shape is refused
with words saying what is wrong."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from tests import fx_files
from transfers.fx.ecb import EcbFileError, parse

DAY = date(2026, 11, 27)
RATES = {"USD": "1.0420", "JPY": "162.35", "GBP": "0.85630", "KWD": "0.3321"}
HISTORY = {
    DAY: RATES,
    date(2026, 11, 26): {"USD": "1.0410", "JPY": "161.90", "GBP": "0.8570"},
}


def test_the_daily_xml() -> None:
    read = parse(fx_files.xml({DAY: RATES}))
    assert read.kind == "xml" and list(read.days) == [DAY]
    assert read.days[DAY] == {c: Decimal(v) for c, v in RATES.items()}
    assert str(read.days[DAY]["GBP"]) == "0.85630"  # as published, exactly


def test_the_history_xml_and_csv_and_their_zips_agree() -> None:
    expected = {d: {c: Decimal(v) for c, v in r.items()} for d, r in HISTORY.items()}
    for data, kind in [
        (fx_files.xml(HISTORY), "xml"),
        (fx_files.history_csv(HISTORY), "csv"),
        (fx_files.zipped("eurofxref-hist.csv", fx_files.history_csv(HISTORY)), "zip"),
        (fx_files.zipped("eurofxref-hist.xml", fx_files.xml(HISTORY)), "zip"),
    ]:
        read = parse(data)
        assert (read.kind, read.days) == (kind, expected), kind
        assert (read.first, read.last, read.count) == (date(2026, 11, 26), DAY, 7)


def test_the_daily_csv_with_its_spaces_and_long_date() -> None:
    data = fx_files.daily_csv(DAY, RATES)
    assert data.startswith(b"Date, USD, JPY") and b"27 November 2026, 1.0420" in data
    assert parse(data).days == {DAY: {c: Decimal(v) for c, v in RATES.items()}}
    assert parse(fx_files.zipped("eurofxref.csv", data)).days == parse(data).days


def test_history_csv_na_cells_are_days_without_that_rate() -> None:
    read = parse(fx_files.history_csv(HISTORY))
    assert "KWD" not in read.days[date(2026, 11, 26)] and read.days[DAY]["KWD"] == Decimal("0.3321")


def _cut(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]


BAD: list[tuple[str, bytes, str]] = [
    ("empty", b"", "empty"),
    ("html", b"<html><body>Service unavailable</body></html>", "not the ECB's gesmes:Envelope"),
    ("json", b'{"rates": {"USD": 1.04}}', "not an ECB reference-rate file"),
    ("truncated xml", _cut(fx_files.xml(HISTORY)), "malformed or cut short"),
    ("truncated zip", _cut(fx_files.zipped("eurofxref-hist.csv", fx_files.history_csv(HISTORY))), "ZIP"),
    ("truncated csv", fx_files.history_csv(HISTORY)[:-12], "cells"),
    # cut inside the last line's last rate: as many cells as the header, but 1.0 of 1.0410 would be wrong
    ("csv cut in a rate", fx_files.history_csv(HISTORY).rstrip(b"\n")[:-4], "cut short"),
    ("daily csv cut in a rate", fx_files.daily_csv(DAY, RATES).rstrip(b"\n")[:-5], "cut short"),
    ("zero rate", fx_files.xml({DAY: {"USD": "0"}}), "zero"),
    ("negative rate", fx_files.xml({DAY: {"USD": "-1.04"}}), "positive"),
    ("text rate", fx_files.xml({DAY: {"USD": "abc"}}), "not a rate"),
    ("odd code", fx_files.xml({DAY: {"usd": "1.04"}}), "not a currency code"),
    ("no day", fx_files.xml({}), "no day"),
    ("day without rates", fx_files.xml({DAY: {}}), "has no rates"),
    ("bad date", fx_files.xml({DAY: RATES}).replace(b"2026-11-27", b"2026-13-27"), "not a date"),
    (
        "doctype",
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>' + fx_files.xml({DAY: RATES})[38:],
        "DOCTYPE",
    ),
    ("header only", b"Date,USD,\n", "no day"),
    ("bad csv header", b"Day,USD,\n2026-11-27,1.04,\n", "not an ECB"),
    ("csv date", b"Date,USD,\nyesterday,1.04,\n", "not a date"),
    ("zip of two", b"", "holds one"),
    ("zip of a pdf", fx_files.zipped("rates.pdf", b"%PDF"), "holds one"),
]


@pytest.mark.parametrize(("name", "data", "words"), BAD, ids=[b[0] for b in BAD])
def test_files_of_another_shape_are_refused_in_words(name: str, data: bytes, words: str) -> None:
    if name == "zip of two":
        import io
        import zipfile

        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("a.csv", fx_files.history_csv(HISTORY))
            archive.writestr("b.csv", fx_files.history_csv(HISTORY))
        data = out.getvalue()
    with pytest.raises(EcbFileError, match=words):
        parse(data)
