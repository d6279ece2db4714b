"""``row_type``: the decorator of the typed rows read on hot paths (``Booking``, ``BookingView``,
``OutboxMessage``).

Frozen for the type checker, plain slotted dataclasses at run time. Why: a frozen dataclass's
``__init__`` sets every field through ``object.__setattr__``, ~10 µs for a 33-field ``BookingView``
on this machine against under 1 µs for the plain one, i.e. ~2 % of a GET booking that builds one
per request. mypy still refuses any assignment to a field (``dataclass_transform(frozen_default=True)``),
so code changes a row only by making a new one (``dataclasses.replace``, ``Booking.moved``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def row_type(cls: type[T]) -> type[T]:
    return dataclass(slots=True)(cls)
