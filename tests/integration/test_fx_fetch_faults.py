"""The ECB fetch when it goes wrong, end to end (docs/rules/fx.md#fetch, #stale, #doctor): a service with
the ``ecb`` provider converts with the rates a local server in the ECB file's shape gave it; then that
server answers 500, trickles its file a byte at a time past the timeout, sends half a file, or nobody
listens. Each fetch fails in words within its bound and writes nothing but the failure; the searches go
on converting at the old rates until those are stale, then leave the offers needing them out (logged
``fx_rate_unavailable``, never an error to the client) and answer the others; ``transfers doctor`` says
how old the rates are and that the last fetch failed.

The rates are the deployment's: the test starts and ends with an empty ``fx_rates`` (as
tests/integration/test_fx_cli.py does)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select, update
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from structlog.testing import capture_logs

from tests import fx_files
from tests.api.test_search_currencies import vehicle
from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.helpers import search_body
from tests.servers import free_port, serving
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import fx_fetches, fx_rates
from transfers.fx import service as fx_service
from transfers.fx.ecb import EcbFileError
from transfers.fx.fetch import FetchFailed
from transfers.ops.doctor import fx_row

SEARCH = "/api/v1/booking-api/search"
RATED = datetime.now(UTC).date() - timedelta(days=3)  # the file's date: usable (max 4 days) until two days on


class EcbServer:
    """GET /eurofxref-daily.xml in the ECB's shape, or failing as ``mode`` says."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.body = fx_files.xml({RATED: {"PLN": "4.2650", "GBP": "0.8563"}})

    async def daily(self, _request: Request) -> Response:
        if self.mode == "500":
            return Response("Internal Server Error", status_code=500)
        if self.mode == "half":
            return Response(self.body[: len(self.body) // 2], media_type="text/xml")
        if self.mode == "trickle":

            async def drip() -> AsyncIterator[bytes]:
                for i in range(len(self.body)):  # ~0.5 KiB at 10 bytes a second: a minute, unless cut off
                    yield self.body[i : i + 1]
                    await asyncio.sleep(0.1)

            return StreamingResponse(drip(), media_type="text/xml")
        return Response(self.body, media_type="text/xml")


@pytest.fixture
async def no_rates(db: Database) -> AsyncIterator[None]:
    async def clear() -> None:
        async with db.write() as conn:
            await conn.execute(delete(fx_rates))
            await conn.execute(update(fx_fetches).values(attempted_at=None, succeeded_at=None, last_error=None))

    await clear()
    yield
    await clear()


async def stored(db: Database) -> list[tuple[Any, ...]]:
    async with db.read() as conn:
        rows = await conn.execute(select(fx_rates.c.currency, fx_rates.c.source, fx_rates.c.rate, fx_rates.c.as_of))
        return sorted(tuple(r) for r in rows)


async def last_error(db: Database) -> str | None:
    async with db.read() as conn:
        return (await conn.execute(select(fx_fetches.c.last_error))).scalar_one()  # type: ignore[no-any-return]


def offers(answer: httpx.Response) -> list[tuple[str, float, str | None]]:
    assert answer.status_code == 200, answer.text
    return [(v["company"], v["price"], v["fx"] and v["fx"]["rate"]) for v in answer.json()["vehicles"]]


async def test_failed_fetches_keep_the_old_rates_until_stale_and_never_fail_a_search(
    database_url: str,
    workdir: Path,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    no_rates: None,
) -> None:
    await make_partner(airports=("POZ",), name="Poznań Złoty Cars", vehicles=[vehicle("pln-1", "426.50", "PLN")])
    await make_partner(airports=("POZ",), name="Poznań Euro Cars", vehicles=[vehicle("eur-1", "99.00", "EUR")])
    _, key = await make_client(currency="EUR")
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": "POZ"},
        dropoff_location={"type": "POINT", "lat": 52.4064, "lng": 16.9252, "name": "Poznań old market"},
    )
    backend = EcbServer()
    clock = ShiftedClock()
    async with serving(Starlette(routes=[Route("/eurofxref-daily.xml", backend.daily)])) as ecb:
        url = f"{ecb.url}/eurofxref-daily.xml"
        cfg = make_settings(
            database_url, workdir, fx_provider="ecb", fx_ecb_url=url, fx_fetch_timeout_seconds=0.5, fx_cache_seconds=0
        )
        app = create_app(cfg, clock=clock, configure_logs=False)
        async with serving(app) as server, httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            imported = await fx_service.fetch(db, clock, cfg, actor="tests")
            assert (imported.kind, imported.last, imported.rates) == ("xml", RATED, 2)
            # PLN -> EUR, derived: 1 / 4.2650 = 0.234467 (6 digits); 426.50 x that = 100.0001... -> 100.00 EUR
            converted = [("Poznań Euro Cars", 99.0, None), ("Poznań Złoty Cars", 100.0, "0.234467")]
            assert offers(await http.post(SEARCH, json=body, headers=bearer(key))) == converted
            fx = (await http.post(SEARCH, json=body, headers=bearer(key))).json()["vehicles"][1]["fx"]
            assert (fx["source"], fx["as_of"]) == ("ecb", RATED.isoformat())
            kept = await stored(db)

            closed = f"http://127.0.0.1:{free_port()}/eurofxref-daily.xml"
            for mode, fetch_url, error, words in [
                ("500", url, FetchFailed, "answered HTTP 500"),
                ("trickle", url, FetchFailed, "did not answer within 0.5 s"),
                ("half", url, EcbFileError, "malformed or cut short"),
                ("ok", closed, FetchFailed, "could not be fetched"),
            ]:
                backend.mode = mode
                started = time.monotonic()
                with pytest.raises(error, match=words):
                    await fx_service.fetch(db, clock, cfg.model_copy(update={"fx_ecb_url": fetch_url}), actor="tests")
                assert time.monotonic() - started < 3, mode  # the whole fetch is bounded, a trickle too
                assert await stored(db) == kept, mode  # nothing written; the old rates stay in use
                assert words in str(await last_error(db)), mode
                assert offers(await http.post(SEARCH, json=body, headers=bearer(key))) == converted, mode

            # the doctor: how old the rates are, and that the last fetch failed
            doctor = await fx_row(cfg.model_copy(update={"fx_max_age_days": 2}))
            assert doctor.result == "WARN", doctor
            assert "ecb: 2 rates" in doctor.detail and "oldest 3 day(s) old (max 2)" in doctor.detail
            assert "stale, so unused: GBP, PLN" in doctor.detail and "last fetch failed" in doctor.detail

            # two days on the file's rates are 5 days old, over the 4 allowed: the PLN offer is left out
            # and logged, the EUR one answered, and the client sees no error
            clock.advance(timedelta(days=2))
            with capture_logs() as logs:
                assert offers(await http.post(SEARCH, json=body, headers=bearer(key))) == [
                    ("Poznań Euro Cars", 99.0, None)
                ]
            assert [
                (e["from_currency"], e["to_currency"], e["reason"]) for e in logs if e["event"] == "fx_rate_unavailable"
            ] == [("PLN", "EUR", "stale")]
            # a good fetch again brings the offer back, at the file's new rate and date
            backend.mode = "ok"
            newer: date = clock.now().date() - timedelta(days=1)
            backend.body = fx_files.xml({newer: {"PLN": "4.2000"}})
            await fx_service.fetch(db, clock, cfg, actor="tests")
            assert await last_error(db) is None
            # 1 / 4.2 = 0.238095; 426.50 x that = 101.5475... -> 101.55
            assert offers(await http.post(SEARCH, json=body, headers=bearer(key))) == [
                ("Poznań Euro Cars", 99.0, None),
                ("Poznań Złoty Cars", 101.55, "0.238095"),
            ]
