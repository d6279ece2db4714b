"""What a side effect of a status change writes, as values (docs/architecture/how-to-add.md, "A side effect").

A side effect (``bookings/effects.EFFECTS``) is one pure function of the change that answers its
steps: mostly ``Insert`` (a table and one row's columns), in the order they are written. A value
the write itself makes, which the rule cannot know before it runs, is named by ``Of`` (a column
of an earlier step's row, or of the booking row as moved: ``MOVED``). Two writers take the same
steps:

* ``bookings/effects_repository.py`` (the general path, every database, inside the caller's
  transaction), which runs them and fills each ``Of`` from what they answered;
* ``bookings/fast_rows.py`` (PostgreSQL's two frozen statements, ``bookings/fast_paths.py``),
  which binds the same values as the parameters of one statement and fills each ``Of`` from its
  CTEs. A step it has no SQL form for (``OpenPeriod``, ``Call``) makes it step aside: the change
  then takes the general path.

So no rule is written twice: a new side effect is one function answering steps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


class Moved:
    """What every step of a change can name: the booking row as the change moved (or inserted) it,
    ``Of(MOVED, "id")`` (the general path has it as ``change.moved``; a fast statement as its
    ``RETURNING *`` CTE: a creation's id is only known there), and the change itself, ``NOW``
    (``change.now``, which a fast statement binds once for all its rows)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MOVED = Moved("MOVED")
CHANGE = Moved("CHANGE")


class Of(NamedTuple):
    """A value the write makes: ``column`` of ``step``'s row (``Insert``: ``id``; ``WalletMove``:
    ``id``, ``balance``, ``currency``, ``delta``; ``Bump``: ``event_sequence``; ``OpenPeriod``:
    ``period``; ``MOVED``: any booking column; ``CHANGE``: ``now``), plus ``plus``. (A named tuple:
    a create makes several, and a tuple is the cheapest value to build.)"""

    step: Step | Moved
    column: str
    plus: int = 0


BOOKING_ID = Of(MOVED, "id")
CLIENT_ID = Of(MOVED, "client_id")
NOW = Of(CHANGE, "now")  # the change's instant: every row's ``created_at``
_NONE: Mapping[str, Of] = MappingProxyType({})


class Insert:
    """One row of the table named ``table`` (``db.tables``): ``values``, the columns the rule knows,
    and ``made``, the columns whose value the write makes (each an ``Of``). ``key``: a column whose
    value names the row's id in what ``write_effects_many`` answers (the outbox's ``webhook_id``).
    (Two mappings rather than one: a fast statement binds ``values`` without looking at each.)"""

    __slots__ = ("key", "made", "table", "values")

    def __init__(
        self, table: str, values: Mapping[str, Any], made: Mapping[str, Of] = _NONE, key: str | None = None
    ) -> None:
        self.table, self.values, self.made, self.key = table, values, made, key

    def __repr__(self) -> str:
        return f"Insert({self.table!r}, {self.values!r}, {self.made!r})"


@dataclass(eq=False, slots=True)
class WalletMove:
    """The client's wallet in ``currency`` (the booking's) moved by ``delta`` if its balance stays >= 0
    (``wallet_repo.MOVE_BY_CLIENT``, the one "never below zero" move); InsufficientBalance, and nothing
    written, when it does not fit or the client holds no wallet in that currency."""

    client_id: int
    currency: str
    delta: Decimal


@dataclass(eq=False, slots=True)
class Bump:
    """The booking's next ``count`` client-event sequence numbers (``event_sequence`` after: the last)."""

    count: int


@dataclass(eq=False, slots=True)
class OpenPeriod:
    """The statement month a partner's journal line counts in (``journal_repo.open_period``: it reads
    the partner's closed statements). The general path only."""

    partner_id: int
    currency: str


@dataclass(eq=False, slots=True)
class Call:
    """A write that needs the database before it knows its rows (a hosted seat's counter, the
    journal's recoveries, which read the journal): ``run`` does what it must and answers further
    steps, written after it. The general path only: a fast statement steps aside for a change with one."""

    run: Callable[[AsyncConnection], Awaitable[Sequence[Step] | None]]


Step = Insert | WalletMove | Bump | OpenPeriod | Call


def referenced(steps: Sequence[Step]) -> set[int]:
    """The steps (by identity) whose row another step names."""
    return {id(v.step) for s in steps if isinstance(s, Insert) for v in s.made.values()}
