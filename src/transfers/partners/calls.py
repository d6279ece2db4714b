"""The partner calls the delivery engine makes: each a kind with its method, path and answer model,
what its answer means (``judge``), and the two transports a partner is reached by.

The member's value is what ``outbox.kind`` stores. How to add a partner call: the architecture
page of the documentation (docs/architecture), "Add a partner call".
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ValidationError

from transfers.delivery.kinds import Judged
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import Verdict
from transfers.delivery.transport import CallResult
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.wire import WireCreateAnswer, WireResult


class MessageKind(StrEnum):
    """``kind = value, method, path, answer model`` (docs/partners, ``openapi/partner.yaml``)."""

    method: str
    path: str
    answer: type[BaseModel]

    CREATE = "booking.create", "POST", "/booking/create", WireCreateAnswer
    UPDATE = "booking.update", "PUT", "/booking/update", WireResult
    # an amendment (``"status": "AMENDED"``) the partner accepts (Success) or refuses (Error)
    AMEND = "booking.amend", "PUT", "/booking/update", WireResult
    # the pickup followed the flight (``"status": "AMENDED", "reason": "FLIGHT_UPDATE"``): a notice; an
    # Error answer is recorded and changes nothing (docs/rules/flights.md#pickup-moves)
    FLIGHT = "booking.flight_update", "PUT", "/booking/update", WireResult

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


def verdict(result: CallResult) -> Verdict:
    """docs/rules/reliability.md#outbox: a 2xx is answered, a 429, 5xx, time-out or connection error is tried again, any
    other 4xx or a body saying ``"status": "Error"`` is a refusal (given up)."""
    body = result.body
    if isinstance(body, dict) and body.get("status") == "Error" and (result.ok or result.outcome == "http_error"):
        if result.http_status is not None and (result.http_status == 429 or result.http_status >= 500):
            return Verdict.RETRY
        return Verdict.PERMANENT
    if result.ok:
        return Verdict.DONE
    if result.outcome == "http_error" and result.http_status is not None:
        if result.http_status == 429 or result.http_status >= 500:
            return Verdict.RETRY
        return Verdict.PERMANENT
    return Verdict.RETRY


def judge(spec: MessageKind, result: CallResult) -> Judged:
    """A partner's answer read by the call's answer model (``spec``'s: each kind binds its own): one
    that breaks the contract is retried (recorded as ``invalid``), an ``"status": "Error"`` body is a
    refusal with the partner's words."""
    outcome = verdict(result)
    answer: BaseModel | None = None
    if outcome is Verdict.DONE:
        try:
            answer = spec.answer.model_validate(result.body)
        except ValidationError as exc:
            outcome = Verdict.RETRY
            result = CallResult(
                "invalid",
                result.http_status,
                None,
                f"answer breaks the contract: {exc.errors()[0]['msg']}",
                result.duration_ms,
                result.raw,
            )
    if isinstance(answer, WireResult) and answer.status == "Error":
        outcome = Verdict.PERMANENT
    error = result.error or (answer.message if isinstance(answer, WireResult | WireCreateAnswer) else None)
    if error is None and outcome is Verdict.PERMANENT:  # an "Error" body: keep the partner's own words
        error = refusal_message(result.body)
    if outcome is Verdict.DONE:
        error = None  # a partner's success message is not an error worth showing operators
    return Judged(outcome, answer, error, result)


def refusal_message(body: object) -> str | None:
    """The ``message`` of a partner's ``{"status": "Error", "message": ...}`` answer (shown to
    clients as an amendment's rejection, recorded on declines), bounded; None when it has none."""
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message.strip():
        return None
    return message.replace("\x00", "").strip()[:1000]


class PartnerHttp:
    """A partner with a server: the call over HTTP (``PartnerClient``), its webhook-id on every attempt."""

    def __init__(self, client: PartnerClient) -> None:
        self.client = client

    async def send(self, kind: str, message: OutboxMessage, *, timeout: float, target: object) -> CallResult:
        if not isinstance(target, PartnerEndpoint):  # the router always names one (``deliveries.partner_router``)
            return CallResult("connect_error", None, None, "no partner endpoint to call", 0.0)
        spec, endpoint = MessageKind.of(kind), target
        return await self.client.call(
            endpoint,
            spec.method,
            spec.path,
            message.payload,
            timeout=timeout,
            webhook_id=message.webhook_id,
            observe=False,
        )


class Unreachable:
    """A partner that no longer exists: every attempt a connection error (retried to the deadline)."""

    async def send(self, kind: str, message: OutboxMessage, *, timeout: float, target: object) -> CallResult:
        return CallResult("connect_error", None, None, "partner not found", 0.0)
