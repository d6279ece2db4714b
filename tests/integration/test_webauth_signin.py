"""``webauth.signin.sign_in`` on both databases: parallel guesses cannot outrun the throttle, a
locked e-mail's lock is not extended by hammering it, and a success clears the failures."""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta

from sqlalchemy import func, select

from tests.browser.conftest import MakeOperator, make_operator  # noqa: F401  (the fixture)
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import web_signin_failures
from transfers.operators import service as operators
from transfers.webauth.realm import Realm
from transfers.webauth.signin import Outcome, sign_in

REALM = Realm(name="console", cookie_name="c", path="/console", login_path="/console/login", secure_cookie=False)
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
            sign_in(db, clock, REALM, operator.email, f"guess {i}", operators.credentials, sleep=no_wait)
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
    after = await sign_in(db, clock, REALM, operator.email, operator.password, operators.credentials, sleep=no_wait)
    assert after.outcome is (Outcome.LOCKED if checked == 5 else Outcome.SIGNED_IN)


async def test_hammering_a_locked_email_does_not_extend_its_lock(
    db: Database,
    clock: ShiftedClock,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    operator = await make_operator("support")
    for _ in range(5):
        await sign_in(db, clock, REALM, operator.email, "wrong!", operators.credentials, sleep=no_wait)
    for _ in range(14):
        clock.advance(timedelta(minutes=1))
        locked = await sign_in(db, clock, REALM, operator.email, "wrong again", operators.credentials, sleep=no_wait)
        assert locked.outcome is Outcome.LOCKED
    assert await failures_of(db, operator.email) == 5
    clock.advance(timedelta(minutes=1, seconds=1))
    signed = await sign_in(db, clock, REALM, operator.email, operator.password, operators.credentials, sleep=no_wait)
    assert signed.outcome is Outcome.SIGNED_IN and signed.opened is not None
    assert await failures_of(db, operator.email) == 0
