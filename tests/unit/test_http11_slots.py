"""``http11._Slots``: the per-partner limit of exchanges at once, taken with or without awaiting
(``Http11Client.start`` takes one without, ``request`` awaits one)."""

from __future__ import annotations

import asyncio

import pytest

from transfers.partners.http11 import _Slots


async def test_taken_without_waiting_up_to_the_limit_then_in_order() -> None:
    slots = _Slots(2)
    assert slots.try_take() and slots.try_take() and not slots.try_take()
    first = asyncio.create_task(slots.take())
    second = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    assert not first.done() and not second.done()
    slots.release()  # handed to the first waiter as it is
    await asyncio.sleep(0)
    assert first.done() and not second.done() and slots.free == 0
    assert not slots.try_take()  # a waiter is queued: no jumping the queue
    slots.release()
    await second
    slots.release()
    slots.release()
    assert slots.free == 2 and not slots.waiters


async def test_a_cancelled_waiter_leaves_its_place_and_passes_on_a_slot_it_was_handed() -> None:
    slots = _Slots(1)
    assert slots.try_take()
    gone = asyncio.create_task(slots.take())
    handed = asyncio.create_task(slots.take())
    after = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert len(slots.waiters) == 2
    slots.release()  # to ``handed``, which is cancelled before it runs: the slot goes on to ``after``
    handed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handed
    await after
    assert slots.free == 0 and not slots.waiters
    slots.release()
    assert slots.free == 1
