"""The values of messages to travellers (docs/rules/messages.md): the client's settings, a message's row,
and the names the tables hold. Pure: no SQL, no HTTP."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class Channel(StrEnum):
    EMAIL = "email"
    SMS = "sms"


class Template(StrEnum):
    """docs/rules/messages.md#templates; ``feedback`` is the rating e-mail (docs/rules/ratings.md)."""

    CONFIRMED = "confirmed"
    REMINDER = "reminder"
    DRIVER_CHANGED = "driver_changed"
    PICKUP_MOVED = "pickup_moved"
    DRIVER_ARRIVED = "driver_arrived"
    CANCELLED = "cancelled"
    FEEDBACK = "feedback"


class Status(StrEnum):
    """A message's status (docs/rules/messages.md#sending): ``scheduled`` until it goes; ``sent`` (an SMS
    becomes ``delivered`` on the provider's receipt); ``suppressed`` (opted out), ``skipped`` (``reason``
    says why), ``expired`` (past ``expires_at``) and ``failed`` (a permanent refusal) are final."""

    SCHEDULED = "scheduled"
    SENT = "sent"
    DELIVERED = "delivered"
    FAILED = "failed"
    SUPPRESSED = "suppressed"
    SKIPPED = "skipped"
    EXPIRED = "expired"


class OptOutSource(StrEnum):
    PAGE = "page"
    SMS_REPLY = "sms_reply"


# The channels a template goes on (docs/rules/messages.md#templates; ``feedback`` by e-mail only).
TEMPLATE_CHANNELS: Mapping[Template, frozenset[Channel]] = {
    Template.CONFIRMED: frozenset({Channel.EMAIL}),
    Template.REMINDER: frozenset({Channel.EMAIL, Channel.SMS}),
    Template.DRIVER_CHANGED: frozenset({Channel.EMAIL, Channel.SMS}),
    Template.PICKUP_MOVED: frozenset({Channel.EMAIL, Channel.SMS}),
    Template.DRIVER_ARRIVED: frozenset({Channel.SMS}),
    Template.CANCELLED: frozenset({Channel.EMAIL, Channel.SMS}),
    Template.FEEDBACK: frozenset({Channel.EMAIL}),
}


@dataclass(frozen=True, slots=True)
class MessageSettings:
    """A client's settings (docs/rules/messages.md#settings). The defaults are a client that set nothing:
    every channel off. ``support_phone`` is the client's (``clients.support_phone``), shown with these."""

    client_id: int
    channels: tuple[Channel, ...] = ()
    brand_name: str | None = None
    sms_sender: str | None = None
    reply_to: str | None = None
    support_phone: str | None = None
    default_language: str | None = None
    feedback: bool = False
    travellers_consented_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def email_on(self) -> bool:
        return Channel.EMAIL in self.channels

    @property
    def sms_on(self) -> bool:
        return Channel.SMS in self.channels

    def resource(self) -> dict[str, Any]:
        """The settings as the CLI prints them and the pages read them."""
        return {
            "client_id": self.client_id,
            "channels": [str(c) for c in self.channels],
            "brand_name": self.brand_name,
            "sms_sender": self.sms_sender,
            "reply_to": self.reply_to,
            "support_phone": self.support_phone,
            "default_language": self.default_language,
            "feedback": self.feedback,
            "travellers_consented_at": _iso(self.travellers_consented_at),
            "updated_at": _iso(self.updated_at),
        }


def ordered_channels(channels: object) -> tuple[Channel, ...]:
    """Stored channels (a JSON list) as Channels in a fixed order (e-mail, SMS); unknown names dropped."""
    names = set(channels) if isinstance(channels, (list, tuple, set, frozenset)) else set()
    return tuple(c for c in Channel if c.value in names)


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message the planner writes (``repository.insert_messages``); ``dedupe_key`` makes a second plan
    of the same trigger write nothing."""

    booking_id: int
    client_id: int
    template: Template
    channel: Channel
    to_address: str | None
    language: str
    status: Status
    revision: str
    scheduled_for: datetime
    expires_at: datetime | None
    reason: str | None = None
    finished_at: datetime | None = None

    @property
    def dedupe_key(self) -> str:
        return dedupe_key(self.booking_id, self.template, self.channel, self.revision)


def dedupe_key(booking_id: int, template: Template | str, channel: Channel | str, revision: str) -> str:
    """``booking:template:channel:revision``: at most one message per booking, template, channel and
    revision (docs/rules/messages.md#timing)."""
    return f"{booking_id}:{template}:{channel}:{revision}"


@dataclass(frozen=True, slots=True)
class TravellerMessage:
    """A row of ``traveller_messages``."""

    id: int
    booking_id: int
    client_id: int
    template: str
    channel: str
    to_address: str | None
    language: str
    status: str
    reason: str | None
    revision: str
    dedupe_key: str
    scheduled_for: datetime
    expires_at: datetime | None
    sent_at: datetime | None
    delivered_at: datetime | None
    provider_id: str | None
    subject: str | None
    body: str | None
    attempts: int
    lease_until: datetime | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> TravellerMessage:
        return cls(
            id=int(row["id"]),
            booking_id=int(row["booking_id"]),
            client_id=int(row["client_id"]),
            template=row["template"],
            channel=row["channel"],
            to_address=row["to_address"],
            language=row["language"],
            status=row["status"],
            reason=row["reason"],
            revision=row["revision"],
            dedupe_key=row["dedupe_key"],
            scheduled_for=row["scheduled_for"],
            expires_at=row["expires_at"],
            sent_at=row["sent_at"],
            delivered_at=row["delivered_at"],
            provider_id=row["provider_id"],
            subject=row["subject"],
            body=row["body"],
            attempts=int(row["attempts"] or 0),
            lease_until=row["lease_until"],
            last_error=row["last_error"],
            created_at=row["created_at"],
            finished_at=row["finished_at"],
        )


@dataclass(frozen=True, slots=True)
class OptOut:
    """A row of ``message_optouts``: ``booking_id`` None stops every booking's messages to the address."""

    id: int
    channel: str
    address: str
    booking_id: int | None
    source: str
    created_at: datetime
    lifted_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> OptOut:
        return cls(
            int(row["id"]),
            row["channel"],
            row["address"],
            None if row["booking_id"] is None else int(row["booking_id"]),
            row["source"],
            row["created_at"],
            row["lifted_at"],
        )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
