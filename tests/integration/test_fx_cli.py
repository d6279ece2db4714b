"""``transfers fx list|set|import|fetch`` through the real CLI entry point (docs/rules/fx.md), against
the session database; the ECB file is served by a local HTTP server in the ECB's shape (never the
real network), answering well, with a 500, too slowly or with something else.

The rates are the deployment's, not a client's, so each test starts from an empty ``fx_rates`` (the
only tests that write it). The CLI reads the real clock: dates are relative to today (UTC).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from click.testing import CliRunner, Result
from sqlalchemy import delete, select, update
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests import fx_files
from tests.servers import serving
from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, fx_fetches, fx_rates

TODAY = datetime.now(UTC).date()
YESTERDAY = TODAY - timedelta(days=1)


def _invoke(args: Sequence[str], env: dict[str, str]) -> Result:
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, list(args), env=env)
    finally:
        get_settings.cache_clear()


async def fx(env: dict[str, str], *args: str) -> Result:
    return await asyncio.to_thread(_invoke, ("fx", *args), env)


def ok(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert result.stderr == ""
    return json.loads(result.stdout)


def refused(result: Result, code: int, words: str) -> None:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and words in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.fixture
async def env(plain_database_url: str, db: Database) -> dict[str, str]:
    async with db.write() as conn:
        await conn.execute(delete(fx_rates))
        await conn.execute(update(fx_fetches).values(attempted_at=None, succeeded_at=None, last_error=None))
    return {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": "test-secret-key-not-for-production",
        "TRANSFERS_ENVIRONMENT": "sandbox",
        "TRANSFERS_SANDBOX_PARTNER": "0",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "TRANSFERS_FX_PROVIDER": "ecb",
    }


async def listed(env: dict[str, str]) -> dict[str, dict[str, str]]:
    shown = ok(await fx(env, "list", "--json"))
    assert set(shown) == {"rates"}
    return {r["currency"]: r for r in shown["rates"]}


async def stored(db: Database) -> list[tuple[str, str, str, date]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(fx_rates.c.currency, fx_rates.c.source, fx_rates.c.rate, fx_rates.c.as_of).order_by(
                fx_rates.c.as_of, fx_rates.c.currency, fx_rates.c.source
            )
        )
        return [tuple(r) for r in rows]  # type: ignore[misc]


async def test_sandbox_provider_lists_the_fixed_table_dated_today(env: dict[str, str]) -> None:
    rates = await listed({**env, "TRANSFERS_FX_PROVIDER": "sandbox"})
    assert rates["GBP"] == {"currency": "GBP", "rate": "0.8563", "source": "sandbox", "as_of": TODAY.isoformat()}
    assert {c: r["rate"] for c, r in rates.items()} == {
        "GBP": "0.8563", "USD": "1.0420", "CHF": "0.9385", "PLN": "4.2650", "TRY": "36.120",
        "THB": "37.550", "AED": "3.8270", "JPY": "162.35", "KWD": "0.3321",
    }  # fmt: skip
    assert await listed(env) == {}  # ecb: no sandbox table
    table = await fx({**env, "TRANSFERS_FX_PROVIDER": "sandbox"}, "list")
    assert table.exit_code == 0 and "GBP" in table.stdout and "0.8563" in table.stdout and "sandbox" in table.stdout


@pytest.mark.parametrize("kind", ["daily xml", "daily csv", "daily zip", "history xml", "history csv", "history zip"])
async def test_import_each_kind_of_ecb_file(env: dict[str, str], db: Database, tmp_path: Path, kind: str) -> None:
    older = YESTERDAY - timedelta(days=1)
    history = {
        YESTERDAY: {"USD": "1.0420", "GBP": "0.8563", "CYP": "0.5853"},
        older: {"USD": "1.0400", "GBP": "0.8600"},
    }
    daily = {YESTERDAY: history[YESTERDAY]}
    data = {
        "daily xml": fx_files.xml(daily),
        "daily csv": fx_files.daily_csv(YESTERDAY, daily[YESTERDAY]),
        "daily zip": fx_files.zipped("eurofxref.csv", fx_files.daily_csv(YESTERDAY, daily[YESTERDAY])),
        "history xml": fx_files.xml(history),
        "history csv": fx_files.history_csv(history),
        "history zip": fx_files.zipped("eurofxref-hist.csv", fx_files.history_csv(history)),
    }[kind]
    path = tmp_path / "rates.bin"
    path.write_bytes(data)
    done = ok(await fx(env, "import", str(path)))
    days = 2 if kind.startswith("history") else 1
    assert done == {
        "source": "ecb",
        "file": kind.split()[1],
        "from": (older if days == 2 else YESTERDAY).isoformat(),
        "to": YESTERDAY.isoformat(),
        "days": days,
        "rates": 2 * days,
        "skipped": ["CYP"],  # no longer an ISO 4217 currency
    }
    rates = await listed(env)
    assert rates == {
        "GBP": {"currency": "GBP", "rate": "0.8563", "source": "ecb", "as_of": YESTERDAY.isoformat()},
        "USD": {"currency": "USD", "rate": "1.0420", "source": "ecb", "as_of": YESTERDAY.isoformat()},
    }
    again = ok(await fx(env, "import", str(path)))  # the file's dates are replaced, not doubled
    assert again["rates"] == 2 * days and len(await stored(db)) == 2 * days


async def test_a_bad_file_writes_nothing_and_says_why(env: dict[str, str], db: Database, tmp_path: Path) -> None:
    good = tmp_path / "good.xml"
    good.write_bytes(fx_files.xml({YESTERDAY: {"USD": "1.0420", "GBP": "0.8563"}}))
    ok(await fx(env, "import", str(good)))
    before = await stored(db)
    whole = fx_files.xml({TODAY: {"USD": "1.05", "GBP": "0.86"}, YESTERDAY: {"USD": "1.01", "GBP": "0.0"}})
    cases = {
        "truncated.xml": (whole[: len(whole) // 2], "malformed or cut short"),
        "zero.xml": (whole, "zero"),  # the first day is fine, the second is not: nothing of either is kept
        "negative.csv": (fx_files.history_csv({TODAY: {"USD": "1.05"}, YESTERDAY: {"USD": "-1.01"}}), "positive"),
        "truncated.csv": (fx_files.history_csv({TODAY: {"USD": "1.05", "GBP": "0.86"}})[:-8], "cells"),
        "daily.csv.zip": (fx_files.zipped("eurofxref.csv", fx_files.daily_csv(TODAY, {"USD": "1.05"})[:-9]), "cells"),
        "page.json": (b'{"rates": {"USD": 1.05}}', "not an ECB reference-rate file"),
        "page.html": (b"<html>maintenance</html>", "gesmes:Envelope"),
        "other.csv": (b"Day,USD,\n2026-11-27,1.04,\n", "not an ECB"),
        "cut.zip": (fx_files.zipped("eurofxref-hist.csv", fx_files.history_csv({TODAY: {"USD": "1.05"}}))[:-30], "ZIP"),
    }
    for name, (data, words) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        refused(await fx(env, "import", str(path)), 1, words)
        assert await stored(db) == before, name
    euro_only = tmp_path / "only-cyp.xml"
    euro_only.write_bytes(fx_files.xml({TODAY: {"CYP": "0.5853"}}))
    refused(await fx(env, "import", str(euro_only)), 1, "no rate of a currency this service accepts")
    missing = await fx(env, "import", str(tmp_path / "nowhere.xml"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


async def test_currencies_left_out_of_transfers_currencies_are_skipped(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "daily.xml"
    path.write_bytes(fx_files.xml({YESTERDAY: {"USD": "1.0420", "GBP": "0.8563", "JPY": "162.35"}}))
    limited = {**env, "TRANSFERS_CURRENCIES": "EUR,GBP,JPY"}
    assert ok(await fx(limited, "import", str(path)))["skipped"] == ["USD"]
    assert set(await listed(limited)) == {"GBP", "JPY"}


async def test_set_a_manual_rate_and_which_wins(env: dict[str, str], db: Database, tmp_path: Path) -> None:
    path = tmp_path / "daily.xml"
    path.write_bytes(fx_files.xml({YESTERDAY: {"USD": "1.0420", "GBP": "0.8563"}}))
    ok(await fx(env, "import", str(path)))
    same_day = ok(await fx(env, "set", "--currency", "GBP", "--rate", "0.8600", "--as-of", YESTERDAY.isoformat()))
    assert same_day == {"currency": "GBP", "rate": "0.8600", "source": "manual", "as_of": YESTERDAY.isoformat()}
    assert (await listed(env))["GBP"]["source"] == "manual"  # manual over ecb on one date
    today = ok(await fx(env, "set", "--currency", "JPY", "--rate", "160.5"))
    assert today["as_of"] == TODAY.isoformat()
    ok(await fx(env, "set", "--currency", "JPY", "--rate", "161"))  # the same day's manual rate replaced
    assert (await listed(env))["JPY"]["rate"] == "161"
    sandbox = await listed({**env, "TRANSFERS_FX_PROVIDER": "sandbox"})
    assert sandbox["JPY"]["source"] == "manual" and sandbox["USD"]["source"] == "sandbox"  # today's sandbox is newer
    async with db.read() as conn:
        actions = [
            r.action for r in await conn.execute(select(admin_audit.c.action).where(admin_audit.c.action.like("fx.%")))
        ]
    assert {"fx.set", "fx.import"} <= set(actions)


async def test_set_refuses_bad_input_with_exit_2(env: dict[str, str], db: Database) -> None:
    tomorrow = (TODAY + timedelta(days=1)).isoformat()
    for args, words in [
        (("--currency", "GBP", "--rate", "0"), "zero"),
        (("--currency", "GBP", "--rate", "-0.85"), "positive"),
        (("--currency", "GBP", "--rate", "1e3"), "not a rate"),
        (("--currency", "gbp", "--rate", "0.85"), "not an ISO 4217"),
        (("--currency", "ZZZ", "--rate", "0.85"), "not an ISO 4217"),
        (("--currency", "EUR", "--rate", "1"), "EUR itself"),
        (("--currency", "GBP", "--rate", "0.85", "--as-of", tomorrow), "after today"),
        (("--currency", "GBP", "--rate", "0.85", "--as-of", "27/11/2026"), "not a date"),
    ]:
        refused(await fx(env, "set", *args), 2, words)
    refused(await fx({**env, "TRANSFERS_CURRENCIES": "EUR,GBP"}, "set", "--currency", "JPY", "--rate", "160"), 2,
            "TRANSFERS_CURRENCIES")  # fmt: skip
    assert await stored(db) == []


class EcbServer:
    """Answers GET /eurofxref-daily.xml in the ECB's shape, or fails as told (``mode``)."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.body = fx_files.xml({YESTERDAY: {"USD": "1.0420", "GBP": "0.8563"}})
        self.calls = 0
        self.release = asyncio.Event()

    async def daily(self, _request: Request) -> Response:
        self.calls += 1
        if self.mode == "500":
            return Response("Internal Server Error", status_code=500)
        if self.mode == "slow":
            await asyncio.wait_for(self.release.wait(), timeout=5)
        if self.mode == "garbage":
            return Response(b"<html>we moved</html>", media_type="text/html")
        return Response(self.body, media_type="text/xml")


@pytest.fixture
async def ecb() -> AsyncIterator[tuple[EcbServer, str]]:
    backend = EcbServer()
    async with serving(Starlette(routes=[Route("/eurofxref-daily.xml", backend.daily)])) as server:
        yield backend, f"{server.url}/eurofxref-daily.xml"
        backend.release.set()


async def test_fetch_imports_the_daily_file_and_a_failure_keeps_the_old_rates(
    env: dict[str, str], db: Database, ecb: tuple[EcbServer, str]
) -> None:
    backend, url = ecb
    with_url = {**env, "TRANSFERS_FX_ECB_URL": url, "TRANSFERS_FX_FETCH_TIMEOUT_SECONDS": "0.5"}
    done = ok(await fx(with_url, "fetch"))
    assert (done["file"], done["to"], done["rates"]) == ("xml", YESTERDAY.isoformat(), 2)
    assert (await listed(env))["GBP"]["rate"] == "0.8563"
    before = await stored(db)
    for mode, words in [("500", "answered HTTP 500"), ("slow", "did not answer within 0.5 s"), ("garbage", "gesmes")]:
        backend.mode = mode
        refused(await fx(with_url, "fetch"), 1, words)
        assert "the rates in use stay" in (await fx(with_url, "fetch")).stderr
        assert await stored(db) == before  # the old rates stay in use
        async with db.read() as conn:
            assert words in str((await conn.execute(select(fx_fetches.c.last_error))).scalar_one())
    refused(await fx(env, "fetch"), 2, "TRANSFERS_FX_ECB_URL is not set")


class FixedClock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


async def test_the_scheduled_fetch_runs_once_a_day_after_16_cet_and_retries_a_failure(
    env: dict[str, str], db: Database, workdir: Path, database_url: str, ecb: tuple[EcbServer, str]
) -> None:
    from tests.conftest import make_settings
    from transfers.fx.service import fetch_if_due

    backend, url = ecb
    cfg = make_settings(database_url, workdir, fx_provider="ecb", fx_ecb_url=url, fx_fetch_timeout_seconds=1.0)
    winter = datetime(2026, 12, 1, 14, 59, tzinfo=UTC)  # 15:59 in Frankfurt
    clock = FixedClock(winter)
    assert await fetch_if_due(db, clock, make_settings(database_url, workdir, fx_ecb_url=url)) == 0  # sandbox
    assert await fetch_if_due(db, clock, make_settings(database_url, workdir, fx_provider="ecb")) == 0  # no URL
    assert await fetch_if_due(db, clock, cfg) == 0 and backend.calls == 0  # before 16:00 CET
    clock.at = winter + timedelta(minutes=2)
    assert await fetch_if_due(db, clock, cfg) == 1 and backend.calls == 1
    clock.at += timedelta(hours=3)
    assert await fetch_if_due(db, clock, cfg) == 0 and backend.calls == 1  # once a day
    clock.at = winter + timedelta(days=1, minutes=2)
    backend.mode = "500"
    with structlog.testing.capture_logs() as logs:
        assert await fetch_if_due(db, clock, cfg) == 0 and backend.calls == 2
    assert [e["event"] for e in logs] == ["fx_fetch_failed"] and "HTTP 500" in logs[0]["error"]
    clock.at += timedelta(minutes=5)
    assert await fetch_if_due(db, clock, cfg) == 0 and backend.calls == 2  # retried after 15 minutes, not before
    backend.mode = "ok"
    clock.at += timedelta(minutes=11)
    assert await fetch_if_due(db, clock, cfg) == 1 and backend.calls == 3
    async with db.read() as conn:
        state = (await conn.execute(select(fx_fetches))).one()
    assert state.last_error is None and state.succeeded_at == clock.at


async def test_doctor_says_how_old_the_rates_are(
    env: dict[str, str], db: Database, workdir: Path, database_url: str, tmp_path: Path
) -> None:
    from tests.conftest import make_settings
    from transfers.ops.doctor import fx_row

    cfg = make_settings(database_url, workdir, fx_provider="ecb", fx_max_age_days=4)
    row = await fx_row(cfg)
    assert row.result == "WARN" and "no rates" in row.detail and "TRANSFERS_FX_ECB_URL is not set" in row.detail
    path = tmp_path / "old.xml"
    old = TODAY - timedelta(days=6)
    path.write_bytes(fx_files.xml({old: {"USD": "1.0420", "GBP": "0.8563"}}))
    ok(await fx(env, "import", str(path)))
    ok(await fx(env, "set", "--currency", "JPY", "--rate", "162.35"))
    row = await fx_row(cfg)
    assert row.result == "WARN", row
    assert "3 rates" in row.detail and "oldest 6 day(s) old (max 4)" in row.detail
    assert "stale, so unused: GBP, USD" in row.detail
    fresh = await fx_row(
        make_settings(database_url, workdir, fx_provider="ecb", fx_max_age_days=7, fx_ecb_url="http://127.0.0.1:9/x")
    )
    assert fresh.result == "PASS" and f"newest {TODAY.isoformat()}" in fresh.detail, fresh
    async with db.write() as conn:
        await conn.execute(update(fx_fetches).values(last_error="http://127.0.0.1:9/x answered HTTP 500"))
    failed = await fx_row(make_settings(database_url, workdir, fx_provider="ecb", fx_max_age_days=7))
    assert failed.result == "WARN" and "last fetch failed: http://127.0.0.1:9/x answered HTTP 500" in failed.detail


async def test_searches_read_the_rates_at_most_every_cache_period_and_each_new_day(
    env: dict[str, str], db: Database, workdir: Path, database_url: str
) -> None:
    from tests.conftest import make_settings
    from transfers.fx.service import RateTables
    from transfers.money import Money

    noon = datetime.combine(TODAY, datetime.min.time(), UTC) + timedelta(hours=12)
    clock = FixedClock(noon)
    tables = RateTables(db, make_settings(database_url, workdir, fx_provider="ecb", fx_cache_seconds=5.0), clock)
    assert (await tables.current()).rates == {}
    ok(await fx(env, "set", "--currency", "GBP", "--rate", "0.8563"))
    clock.at += timedelta(seconds=4)
    assert (await tables.current()).rates == {}  # within the cache period: not read again
    clock.at += timedelta(seconds=2)
    table = await tables.current()
    assert table.convert(Money.parse("56.05", "EUR"), "GBP").amount == Money.parse("48.00", "GBP")
    assert table.today == TODAY and table.max_age_days == 4
    clock.at = noon + timedelta(hours=12, seconds=1)  # the next UTC day: read again at once
    tomorrow = await tables.current()
    assert tomorrow.today == TODAY + timedelta(days=1) and "GBP" in tomorrow.rates


async def test_position_answers_the_fx_accounts_balances(env: dict[str, str], db: Database) -> None:
    """docs/rules/fx.md#position: what the journal's FX accounts hold, per currency, in its decimals."""
    from transfers import money
    from transfers.accounting import service as books

    shown = ok(await fx(env, "position", "--json"))
    expected = [{"currency": c, "balance": money.text(b, c)} for c, b in await books.fx_position(db)]
    assert shown == {"accounts": expected}
    table = await fx(env, "position")
    assert table.exit_code == 0 and table.output.splitlines()[0].split() == ["CURRENCY", "BALANCE"]
