"""Replies to our texts (docs/rules/messages.md#opt-out): STOP and its synonyms stop every text to the
number, from every client; START or UNSTOP lifts that.

Only a reply whose whole text is one of the words counts (any case, spaces and line breaks around it
ignored): "please stop texting" or "STOP." is a message to a person, not an instruction, and changes
nothing. The number is the reply's ``From``, as the provider wrote it (E.164); the opt-out is kept as
channel ``sms``, that number, every booking, source ``sms_reply``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.messages import repository
from transfers.messages.models import Channel, OptOutSource
from transfers.messages.sms.senders import e164

STOP_WORDS = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
START_WORDS = frozenset({"START", "UNSTOP"})

Instruction = Literal["stop", "start"]


def instruction(body: str) -> Instruction | None:
    """``stop``, ``start`` or None (an ordinary reply) for a reply's whole text."""
    word = body.strip().upper()
    if word in STOP_WORDS:
        return "stop"
    if word in START_WORDS:
        return "start"
    return None


def sender_number(from_: str) -> str | None:
    """The replying number in E.164, as opt-outs are kept (None: not a phone number we can read)."""
    return e164(from_)


async def record_reply(conn: AsyncConnection, from_: str, body: str, now: datetime) -> Instruction | None:
    """Apply one reply: a STOP adds the number's opt-out (a second STOP adds nothing), a START lifts every
    SMS opt-out of the number. Returns what the reply was (None: nothing recorded)."""
    said = instruction(body)
    number = sender_number(from_)
    if said is None or number is None:
        return None
    if said == "stop":
        await repository.add_optout(conn, Channel.SMS, number, booking_id=None, source=OptOutSource.SMS_REPLY, now=now)
    else:
        await repository.lift_optouts(conn, Channel.SMS, number, now)
    return said
