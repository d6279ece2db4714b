"""``row_type``: the decorator of the typed rows read on hot paths (``Booking``, ``BookingView``,
``OutboxMessage``); ``frozen_value``: the trip's frozen values (``bookings/trip.py``).

Frozen for the type checker, plain slotted dataclasses at run time. Why: a frozen dataclass's
``__init__`` sets every field through ``object.__setattr__``, ~10 µs for a 33-field ``BookingView``
on this machine against under 1 µs for the plain one, i.e. ~2 % of a GET booking that builds one
per request. mypy still refuses any assignment to a field (``dataclass_transform(frozen_default=True)``),
so code changes a row only by making a new one (``dataclasses.replace``, ``Booking.moved``).
"""

from __future__ import annotations

from collections.abc import Callable
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
    (bench/README.md, "GET booking after issues 21-27"). This one calls each slot's own setter
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


def maker(cls: type[T]) -> Callable[..., T]:
    """A constructor of ``cls`` (a frozen slotted dataclass) for hot paths: positional arguments in
    field order, every field given, no defaults; the same instance ``cls(...)`` would make.

    Why: a frozen dataclass's ``__init__`` must set each slot through ``object.__setattr__``
    (``frozen_value``'s setters are cheaper, still a C call per field): ~12 k instructions for a
    15-field ``Offer``, built 20 to the 10-partner search (issue 26). This builds the instance as a plain
    slotted twin of ``cls`` (the same slots, so the same layout; ordinary attribute stores), then
    makes it a ``cls`` by assigning ``__class__`` (Python allows that between such layouts): ~4 k.
    What comes out is a ``cls`` like any other: frozen, equal, hashed and printed as ``cls``'s own."""
    names = tuple(f.name for f in fields(cast(Any, cls)))
    slots = getattr(cls, "__slots__", None)
    if slots is None or tuple(slots) != names:
        raise TypeError(f"{cls.__name__}: maker takes a slotted dataclass")
    twin = type(f"_{cls.__name__}Maker", (), {"__slots__": names})
    env: dict[str, Any] = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    body = "".join(f"    self.{name} = {name}\n" for name in names)
    source = (
        f"def make({', '.join(names)}):\n    self = _new(_twin)\n{body}    self.__class__ = _cls\n    return self\n"
    )
    made: dict[str, Any] = {}
    exec(source, env, made)  # noqa: S102  # from the field names only, as dataclasses builds its __init__
    make: Callable[..., T] = made["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.__module__ = cls.__module__
    return make
