"""The kinds of outbox message: each one partner call, with its method, path and answer model.

The member's value is what ``outbox.kind`` stores. How to add one: ``outbox/dispatcher.py``'s
module docstring.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from transfers.partners.wire import WireCreateAnswer, WireResult


class MessageKind(StrEnum):
    """``kind = value, method, path, answer model`` (PARTNER_API.md, ``openapi/partner.yaml``)."""

    method: str
    path: str
    answer: type[BaseModel]

    CREATE = "booking.create", "POST", "/booking/create", WireCreateAnswer
    UPDATE = "booking.update", "PUT", "/booking/update", WireResult
    # issue 15: an amendment (``"status": "AMENDED"``) the partner accepts (Success) or refuses (Error)
    AMEND = "booking.amend", "PUT", "/booking/update", WireResult

    def __new__(cls, value: str, method: str, path: str, answer: type[BaseModel]) -> MessageKind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.method, member.path, member.answer = method, path, answer
        return member

    @classmethod
    def of(cls, stored: str) -> MessageKind:
        """The member of a stored ``outbox.kind`` (``MessageKind(stored)`` to type checkers looks
        like a call of ``__new__`` without its other arguments)."""
        for member in cls:
            if member.value == stored:
                return member
        raise ValueError(f"unknown outbox message kind {stored!r}")
