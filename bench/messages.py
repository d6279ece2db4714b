"""Messages to travellers (docs/rules/messages.md): the reminders pass over N upcoming bookings, and messages
per second through one worker, on PostgreSQL.

    .venv/bin/python -m bench.messages --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 100000]

Seeding, in SQL (``INSERT ... SELECT generate_series``): one client with e-mail and SMS on, one partner, N
APPROVED bookings made 2 days ago with pickups spread evenly over the next 30 days (so about 1 in 30 is
within 24 h: its reminder is due). Then:

* **the reminders pass** (``messages/reminders.reminders_pass``, the scheduled ``plan_reminders`` job):
  which reminders are due among the N, written (e-mail and SMS each); timed cold (it writes them) and
  again (nothing left to write: what every later run of the job costs);
* **e-mail through one worker**: the due e-mail reminders sent by the scheduled ``traveller_messages``
  job's function (``messages/delivery.send_due``, the delivery engine, one SMTP exchange each) to a local
  SMTP server (aiosmtpd's ``Sink``, a process of its own), until none is left: messages per second;
* **SMS through one worker**: the due SMS reminders, the same way, to a local server answering like
  Twilio's Messages API (``tests/fake_twilio.py``, a process of its own: ``--serve-twilio PORT``) with
  ``TRANSFERS_SMS_PROVIDER=twilio``: messages per second (each is rendered, its attempt recorded, the
  HTTP call made and its end written).

The worker is this process; the servers it talks to are others, as they are in production, so their
work is not counted in its time (an SMTP server in a thread of this process would hold its GIL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import select, update
from tests.smtp_server import free_port

from bench.procs import Proc
from transfers.clients.models import NewClient
from transfers.clients.service import create_client
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.db.tables import traveller_messages
from transfers.logging import configure_logging
from transfers.messages import delivery, reminders
from transfers.messages import repository as messages_repo
from transfers.messages.models import Channel, MessageSettings
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.service import register_partner
from transfers.services import Services

SECRET = "bench-messages-secret-key-0123456789abcdef"
BATCH = 100_000
DAYS = 30

_BOOKINGS = """
INSERT INTO bookings (
  reservation_no, client_id, partner_id, status, pay_type, airport_iata, pickup_at, pickup_location,
  dropoff_location, flight_number, adult, children, infant, passenger_name, passenger_surname,
  passenger_email, passenger_phone, suitcase, small_bags, vehicle_make, vehicle_model, vehicle_type,
  partner_vehicle_id, total, net_total, currency, booking_type, extras, created_at, updated_at,
  tracking_token, passenger_language)
SELECT
  'TB-M' || lpad(g::text, 9, '0'), $3::bigint, $4::bigint, 'APPROVED', 'wallet', 'LHR',
  $5::timestamptz + make_interval(secs => g * $6::float8 * 86400 / $7::float8),
  '{"type": "AIRPORT", "iata_code": "LHR", "name": "Heathrow"}'::json,
  '{"type": "POINT", "lat": 51.5, "lng": -0.12, "name": "Russell Square"}'::json,
  'BA117', 2, 0, 0, 'Ada', 'Lovelace', 'ada' || g || '@example.com', '+447911' || lpad((g % 1000000)::text, 6, '0'),
  1, 1, 'Toyota', 'Corolla', 'SEDAN', 'car-1', 52.50, 52.50, 'EUR', 'ONEWAY', '[]'::json,
  $5::timestamptz - interval '2 days', $5::timestamptz - interval '2 days',
  'bench' || g, CASE WHEN g % 3 = 0 THEN 'de-DE' END
FROM generate_series($1::bigint, $2::bigint) AS g
"""


def settings_for(dsn: str, **more: Any) -> Settings:
    return Settings(
        database_url=dsn.replace("postgresql://", "postgresql+asyncpg://", 1),
        secret_key=SECRET,
        public_base_url="https://transfers.example",
        **more,
    )


async def seed(dsn: str, count: int, now: datetime, days: int = DAYS) -> None:
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    await asyncio.to_thread(upgrade, url)
    db = Database(url, pool_size=2, application_name="bench-messages")
    try:
        box = SecretBox(resolve_secret_key(Settings(database_url=dsn, secret_key=SECRET)))
        partner = await register_partner(
            db,
            SystemClock(),
            box,
            name="bench-messages",
            base_url="http://127.0.0.1:9",
            airports=("LHR",),
            markup_percent=Decimal(0),
            allow_private=True,
            actor="bench",
        )
        client = await create_client(
            db,
            SystemClock(),
            NewClient(name="bench: messages", pay_type="wallet", currency="EUR", opening_balance=Decimal(0)),
            actor="bench",
        )
        async with db.write() as conn:
            await messages_repo.save_settings(
                conn,
                MessageSettings(
                    client_id=client.client_id,
                    channels=(Channel.EMAIL, Channel.SMS),
                    brand_name="Sunny Trips",
                    sms_sender="SunnyTrips",
                    reply_to="help@sunny.example",
                    support_phone="+442071234567",
                    travellers_consented_at=now,
                ),
                now,
            )
    finally:
        await db.dispose()
    conn = await asyncpg.connect(dsn)
    try:
        started = time.monotonic()
        for lo in range(1, count + 1, BATCH):
            hi = min(lo + BATCH - 1, count)
            await conn.execute(_BOOKINGS, lo, hi, client.client_id, partner.partner_id, now, days, count)
        await conn.execute("VACUUM ANALYZE bookings")
        print(f"  seeded {count:,} upcoming bookings over {days} days in {time.monotonic() - started:.1f} s")
    finally:
        await conn.close()


async def reminders_pass(dsn: str, now: datetime) -> tuple[float, float, int]:
    db = Database(dsn.replace("postgresql://", "postgresql+asyncpg://", 1), pool_size=2, application_name="bench")
    try:
        started = time.monotonic()
        read = await reminders.reminders_pass(db, now)
        cold = time.monotonic() - started
        started = time.monotonic()
        await reminders.reminders_pass(db, now)
        warm = time.monotonic() - started
        return cold, warm, read
    finally:
        await db.dispose()


async def due_now(db: Database, channel: str, now: datetime) -> int:
    """Every scheduled message of ``channel`` due now (the others pushed out of the way)."""
    async with db.write() as conn:
        await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.status == "scheduled", traveller_messages.c.channel != channel)
            .values(scheduled_for=now + timedelta(days=365))
        )
        made = await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.status == "scheduled", traveller_messages.c.channel == channel)
            .values(scheduled_for=now - timedelta(seconds=1))
        )
        return int(made.rowcount or 0)


async def drain(svc: Services, sms: Any = None) -> tuple[int, float, float]:
    """Send until nothing is due: (messages, wall seconds, this process's CPU seconds)."""
    kinds = delivery.traveller_message_kinds(svc, sms)
    started, cpu = time.monotonic(), time.process_time()
    sent = 0
    while True:
        done = await delivery.send_due(svc, kinds, limit=100)
        if done == 0:
            break
        sent += done
    return sent, time.monotonic() - started, time.process_time() - cpu


def rate_line(what: str, sent: int, seconds: float, cpu: float) -> str:
    per = cpu / max(sent, 1) * 1000
    return (
        f"{what}: {sent:,} in {seconds:.2f} s = {sent / seconds:.0f}/s (goal >= 100/s); {per:.1f} ms of the "
        f"worker's CPU a message (~{1000 / per:.0f}/s on a free core); load {os.getloadavg()[0]:.1f}"
    )


@contextlib.contextmanager
def server(name: str, argv: list[str], port: int, pidfile: Path) -> Iterator[None]:
    """A server process of its own, ready on ``port`` (stopped on exit)."""
    work = Path(tempfile.mkdtemp(prefix="bench-messages-"))
    proc = Proc(
        name,
        argv,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
        cwd=Path.cwd(),
        log=work / f"{name}.log",
        pidfile=pidfile,
    ).start()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or (proc.popen is not None and proc.popen.poll() is not None):
                    raise RuntimeError(f"{name} did not start; log:\n{proc.tail()}") from None
                time.sleep(0.1)
        yield
    finally:
        proc.stop()


async def email_rate(dsn: str, limit: int, pidfile: Path) -> tuple[int, float, float]:
    port = free_port()
    sink = [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", "-c", "aiosmtpd.handlers.Sink"]
    with server("smtp", sink, port, pidfile):
        svc = Services.build(settings_for(dsn, smtp_url=f"smtp://127.0.0.1:{port}"), application_name="bench-worker")
        try:
            await due_now(svc.db, "email", svc.clock.now())
            await _limit(svc.db, "email", limit)
            return await drain(svc)
        finally:
            await svc.partner_client.aclose()
            await svc.db.dispose()


async def sms_rate(dsn: str, limit: int, pidfile: Path) -> tuple[int, float, float] | None:
    try:
        from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN

        from transfers.messages.sms.provider import provider_for
    except ImportError:  # the SMS provider and its test server are not in this tree
        return None
    port = free_port()
    with server("twilio", [sys.executable, "-m", "bench.messages", "--serve-twilio", str(port)], port, pidfile):
        settings = settings_for(
            dsn,
            sms_provider="twilio",
            sms_provider_url=f"http://127.0.0.1:{port}",
            twilio_account_sid=ACCOUNT_SID,
            twilio_auth_token=AUTH_TOKEN,
            sms_long_code="+12025550123",
        )
        svc = Services.build(settings, application_name="bench-worker")
        provider = provider_for(settings)
        try:
            await due_now(svc.db, "sms", svc.clock.now())
            await _limit(svc.db, "sms", limit)
            return await drain(svc, provider)
        finally:
            await provider.aclose()
            await svc.partner_client.aclose()
            await svc.db.dispose()


async def serve_twilio(port: int) -> None:
    """The Twilio-shaped server alone, until killed (the bench's SMS side)."""
    from tests.fake_twilio import FakeTwilio
    from tests.servers import LiveServer

    await LiveServer(FakeTwilio().app(), port=port).start()
    await asyncio.Event().wait()


async def _limit(db: Database, channel: str, limit: int) -> None:
    """Only the first ``limit`` due messages of ``channel`` stay due (0: all)."""
    if not limit:
        return
    m = traveller_messages
    waiting = (m.c.status == "scheduled", m.c.channel == channel)
    first = select(m.c.id).where(*waiting).order_by(m.c.id).limit(limit)
    async with db.write() as conn:
        await conn.execute(
            update(m)
            .where(*waiting, m.c.id.not_in(first))
            .values(scheduled_for=datetime.now(UTC) + timedelta(days=365))
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default="", help="an EMPTY PostgreSQL database (it is filled)")
    parser.add_argument("--bookings", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=DAYS, help="the pickups spread over this many days ahead")
    parser.add_argument("--messages", type=int, default=2000, help="messages sent per channel (0: every due one)")
    parser.add_argument("--quick", action="store_true", help="20,000 bookings, 300 messages: checks the bench works")
    parser.add_argument("--pidfile", default=None, help="bench/run.sh's: the PIDs of the servers it starts")
    parser.add_argument("--serve-twilio", type=int, default=0, help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.serve_twilio:
        await serve_twilio(args.serve_twilio)
        return
    if not args.dsn:
        parser.error("--dsn is required")
    pidfile = Path(args.pidfile) if args.pidfile else Path(tempfile.mkdtemp(prefix="bench-messages-")) / "pids"
    if args.quick:
        args.bookings, args.messages = 20_000, 300
    configure_logging("WARNING", "json")  # no log line per message in the figures
    now = datetime.now(UTC).replace(microsecond=0)
    await seed(args.dsn, args.bookings, now, args.days)
    cold, warm, read = await reminders_pass(args.dsn, now)
    print(
        f"reminders pass over {args.bookings:,} upcoming bookings: {cold:.2f} s writing {read:,} due "
        f"(e-mail + SMS each), {warm:.2f} s again with nothing to write (target <= 5 s)"
    )
    print(
        rate_line(
            "e-mail through one worker to a local SMTP server", *await email_rate(args.dsn, args.messages, pidfile)
        )
    )
    sms = await sms_rate(args.dsn, args.messages, pidfile)
    if sms is None:
        print("SMS through one worker: skipped (no SMS provider in this tree)")
    else:
        print(rate_line("SMS through one worker to a local Twilio-shaped server", *sms))


if __name__ == "__main__":
    asyncio.run(main())
