"""Every outbox message kind is a complete partner call: method, path, answer model, effect."""

from __future__ import annotations

from pydantic import BaseModel

from transfers.bookings.partner_answers import EFFECTS
from transfers.partners.calls import MessageKind
from transfers.partners.wire import WireCreateAnswer, WireResult


def test_every_kind_has_its_call_and_its_effect() -> None:
    assert set(EFFECTS) == set(MessageKind)
    for kind in MessageKind:
        assert kind.method in ("POST", "PUT") and kind.path.startswith("/booking/")
        assert issubclass(kind.answer, BaseModel)


def test_stored_kinds_keep_their_values() -> None:
    # outbox.kind rows written before this enum existed hold these strings
    assert [(k.value, k.method, k.path, k.answer) for k in MessageKind] == [
        ("booking.create", "POST", "/booking/create", WireCreateAnswer),
        ("booking.update", "PUT", "/booking/update", WireResult),
        ("booking.amend", "PUT", "/booking/update", WireResult),  # "status": "AMENDED"
        ("booking.flight_update", "PUT", "/booking/update", WireResult),  # reason FLIGHT_UPDATE
    ]
    assert MessageKind.of("booking.update") is MessageKind.UPDATE
