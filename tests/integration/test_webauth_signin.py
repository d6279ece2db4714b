"""``webauth.signin.sign_in`` on both databases: parallel guesses cannot outrun the throttle, a
locked e-mail's lock is not extended by hammering it, and a success clears the failures; the lock-out
counts per e-mail *and* client address (nobody locks a person out from elsewhere); an address gets 10
attempts a minute, the 11th refused before any password is hashed, even in a parallel burst."""

from __future__ import annotations

import asyncio
import itertools
import random
from dataclasses import replace
from datetime import timedelta

from prometheus_client import REGISTRY
from sqlalchemy import func, select

from tests.browser.conftest import MakeOperator, make_operator  # noqa: F401  (the fixture)
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import web_signin_failures
from transfers.operators import service as operators
from transfers.webauth.realm import Realm
from transfers.webauth.signin import Outcome, sign_in

# The per-address limit out of the way here (tested below with its real 10 on a realm of its own).
REALM = Realm(
    name="console",
    cookie_name="c",
    path="/console",
    login_path="/console/login",
    secure_cookie=False,
    attempts_per_address=100_000,
)
HOST = "192.0.2.1"
_numbers = itertools.count(1)


async def no_wait(_: float) -> None:
    return None


async def failures_of(db: Database, email: str) -> int:
    async with db.read() as conn:
        return int(
            (
                await conn.execute(
                    select(func.count()).select_from(web_signin_failures).where(web_signin_failures.c.email == email)
                )
            ).scalar_one()
        )


async def test_a_burst_of_parallel_guesses_checks_at_most_five_passwords(
    db: Database,
    clock: ShiftedClock,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    operator = await make_operator("admin")
    results = await asyncio.gather(
        *(
            sign_in(
                db, clock, REALM, operator.email, f"guess {i}", operators.credentials, client_host=HOST, sleep=no_wait
            )
            for i in range(20)
        )
    )
    outcomes = [r.outcome for r in results]
    assert Outcome.SIGNED_IN not in outcomes
    assert outcomes.count(Outcome.WRONG) <= 4  # the 5th checked guess already answers "locked"
    checked = await failures_of(db, operator.email)  # only guesses whose password was checked stay recorded
    assert checked <= 5
    # Whether the burst refused itself before any check (every attempt saw the others) or checked some:
    # the lock-out follows the checked guesses alone.
    after = await sign_in(
        db, clock, REALM, operator.email, operator.password, operators.credentials, client_host=HOST, sleep=no_wait
    )
    assert after.outcome is (Outcome.LOCKED if checked == 5 else Outcome.SIGNED_IN)


async def test_hammering_a_locked_email_does_not_extend_its_lock(
    db: Database,
    clock: ShiftedClock,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    operator = await make_operator("support")
    for _ in range(5):
        await sign_in(
            db, clock, REALM, operator.email, "wrong!", operators.credentials, client_host=HOST, sleep=no_wait
        )
    for _ in range(14):
        clock.advance(timedelta(minutes=1))
        locked = await sign_in(
            db, clock, REALM, operator.email, "wrong again", operators.credentials, client_host=HOST, sleep=no_wait
        )
        assert locked.outcome is Outcome.LOCKED
    assert await failures_of(db, operator.email) == 5
    clock.advance(timedelta(minutes=1, seconds=1))
    signed = await sign_in(
        db, clock, REALM, operator.email, operator.password, operators.credentials, client_host=HOST, sleep=no_wait
    )
    assert signed.outcome is Outcome.SIGNED_IN and signed.opened is not None
    assert await failures_of(db, operator.email) == 0


def fresh_address() -> str:
    """An address no other test (nor an earlier run on the same database, within its minute) signed in from."""
    return f"100.64.{random.randrange(256)}.{random.randrange(1, 255)}"


def checks_so_far() -> float:
    """Passwords checked so far in this process (the public counter ``signin_password_checks_total``)."""
    return REGISTRY.get_sample_value("signin_password_checks_total") or 0.0


async def test_a_lock_out_holds_only_for_the_address_that_earned_it(
    db: Database,
    clock: ShiftedClock,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    victim = await make_operator("support")
    attacker, office = "198.51.100.7", "203.0.113.20"
    for _ in range(5):
        await sign_in(
            db, clock, REALM, victim.email, "guess!", operators.credentials, client_host=attacker, sleep=no_wait
        )
    refused = await sign_in(
        db, clock, REALM, victim.email, victim.password, operators.credentials, client_host=attacker, sleep=no_wait
    )
    assert (
        refused.outcome is Outcome.LOCKED
    )  # the attacker's address is locked out of this e-mail, right password or not
    signed = await sign_in(
        db, clock, REALM, victim.email, victim.password, operators.credentials, client_host=office, sleep=no_wait
    )
    assert signed.outcome is Outcome.SIGNED_IN  # the person, from their own address, is not
    # The success cleared the office's failures only: the attacker's address stays locked.
    again = await sign_in(
        db, clock, REALM, victim.email, victim.password, operators.credentials, client_host=attacker, sleep=no_wait
    )
    assert again.outcome is Outcome.LOCKED


async def test_an_address_gets_ten_attempts_a_minute_and_the_eleventh_hashes_nothing(
    db: Database,
    clock: ShiftedClock,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    realm = replace(REALM, attempts_per_address=10)
    operator = await make_operator("support")
    host = fresh_address()
    before = checks_so_far()
    burst = await asyncio.gather(
        *(
            sign_in(db, clock, realm, f"nobody{i}@example.com", "guess", operators.credentials, client_host=host)
            for i in range(25)
        )
    )
    outcomes = [r.outcome for r in burst]
    assert outcomes.count(Outcome.WRONG) == 10 and outcomes.count(Outcome.BUSY) == 15
    assert checks_so_far() - before == 10  # the 15 refused ones hashed nothing
    assert all(1 <= (r.retry_after or 0) <= 60 for r in burst if r.outcome is Outcome.BUSY)
    # Even the right password waits: the limit is checked before anything else.
    busy = await sign_in(db, clock, realm, operator.email, operator.password, operators.credentials, client_host=host)
    assert busy.outcome is Outcome.BUSY and checks_so_far() - before == 10
    # Another address is not slowed by this one; an IPv6 address counts by its /64.
    other = await sign_in(
        db, clock, realm, operator.email, operator.password, operators.credentials, client_host="2001:db8:7:7::1"
    )
    assert other.outcome is Outcome.SIGNED_IN
    clock.advance(timedelta(seconds=61))
    signed = await sign_in(db, clock, realm, operator.email, operator.password, operators.credentials, client_host=host)
    assert signed.outcome is Outcome.SIGNED_IN
