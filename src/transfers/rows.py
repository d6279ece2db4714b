"""``row_type``: the decorator of the typed rows read on hot paths (``Booking``, ``BookingView``,
``OutboxMessage``); ``frozen_value``: the trip's frozen values (``bookings/trip.py``).

Frozen for the type checker, plain slotted dataclasses at run time. Why: a frozen dataclass's
``__init__`` sets every field through ``object.__setattr__``, ~10 µs for a 33-field ``BookingView``
on this machine against under 1 µs for the plain one, i.e. ~2 % of a GET booking that builds one
per request. mypy still refuses any assignment to a field (``dataclass_transform(frozen_default=True)``),
so code changes a row only by making a new one (``dataclasses.replace``, ``Booking.moved``).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar, cast, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def row_type(cls: type[T]) -> type[T]:
    return dataclass(slots=True)(cls)


@dataclass_transform(frozen_default=True)
def frozen_value(cls: type[T]) -> type[T]:
    """A frozen slotted dataclass (``@dataclass(frozen=True, slots=True)``: assigning a field raises
    ``FrozenInstanceError`` at run time too) with a cheaper ``__init__``.

    Why: the trip of a booking (``bookings/trip.py``, ~10 such objects) is built for every create's
    partner payload, its client event and its answer, and for every GET booking. The frozen
    dataclass's generated ``__init__`` sets each field by ``object.__setattr__`` (a lookup of
    ``object``, then a wrapper call that looks the slot up by name): ~27 k instructions per trip
    (docs/operations/performance-history.md#get-booking). This one calls each slot's own setter
    (its member descriptor's ``__set__``, bound once here), which is what ``object.__setattr__``
    ends in: the same fields, the same positional/keyword signature and defaults, the same objects.
    Everything else (``__setattr__``/``__delattr__`` refusing, ``__eq__``, ``__hash__``, ``__repr__``,
    ``fields``, ``replace``, ``__match_args__``) is the dataclass's own. No ``default_factory``,
    ``init=False`` or ``__post_init__`` field is supported (refused here)."""
    made: Any = dataclass(frozen=True, slots=True)(cls)
    if hasattr(made, "__post_init__"):
        raise TypeError(f"{made.__name__}: frozen_value does not run __post_init__")
    env: dict[str, Any] = {}
    params: list[str] = []
    body: list[str] = []
    for f in fields(made):
        if not f.init or f.kw_only or f.default_factory is not MISSING:
            raise TypeError(f"{made.__name__}.{f.name}: frozen_value takes plain fields with plain defaults")
        env[f"_set_{f.name}"] = made.__dict__[f.name].__set__
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    made_init: dict[str, Any] = {}
    exec(source, env, made_init)  # noqa: S102  # as dataclasses builds its own: from the field names only
    init = made_init["__init__"]
    init.__qualname__ = f"{made.__qualname__}.__init__"
    init.__module__ = made.__module__
    made.__init__ = init
    return cast(type[T], made)
