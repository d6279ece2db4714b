"""The SMS provider interface (docs/rules/messages.md#sending) and the two providers that send nothing.

A provider answers one call, ``send``, with an ``SmsAnswer``; it never raises for what the provider or the
network did, and never touches the database (the delivery engine records the answer on the message row):

| outcome | the message | when |
|---|---|---|
| ``sent`` | ``sent``, ``provider_id`` kept (a receipt: ``delivered`` or ``failed``) | the provider took it |
| ``retry`` | stays ``scheduled``, tried again on the standard schedule until it expires | 429, 5xx, no answer |
| ``failed`` | ``failed`` at once | a permanent refusal: any 4xx but 429 (an invalid or unsubscribed number) |
| ``skipped`` | ``skipped``, reason ``not_configured`` | ``TRANSFERS_SMS_PROVIDER=none``: logged, not sent |

``ambiguous`` (only with ``retry``): the request reached the provider and no usable answer came back (a
timeout after the request was written, a connection dropped mid-answer, a 2xx without a readable id), so
the provider may have taken it. The delivery engine must not send it again blindly: it is ``failed``,
reason ``ambiguous`` (docs/rules/messages.md#sending).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Literal, Protocol

import structlog

from transfers.config import Settings
from transfers.errors import Unavailable

log = structlog.get_logger("transfers.messages.sms")

Outcome = Literal["sent", "retry", "failed", "skipped"]
NO_PROVIDER = (
    "not_configured"  # the skipped message's reason under TRANSFERS_SMS_PROVIDER=none (as e-mail without SMTP)
)
SANDBOX_ID_PREFIX = "sandbox-"
# Where the provider's callbacks arrive (api/routes/sms_hooks.py): replies, and delivery receipts.
INBOUND_PATH = "/hooks/sms/twilio"
STATUS_PATH = "/hooks/sms/twilio/status"


def status_callback_url(service_url: str) -> str:
    """The ``status_callback`` to send with each text: ``{TRANSFERS_PUBLIC_BASE_URL}/hooks/sms/twilio/status``
    (``Settings.service_url``), the address Twilio posts its receipts to and signs."""
    return service_url.rstrip("/") + STATUS_PATH


@dataclass(frozen=True, slots=True)
class SmsAnswer:
    """What became of one send. ``provider_id``: the provider's id for the text (Twilio's message SID)
    when ``sent``; ``error``: one line for the message's ``last_error`` (never the text itself);
    ``reason``: a short word for the message's ``reason`` (``invalid_number``, ``unsubscribed``,
    ``not_mobile``, ``refused``, ``rate_limited``, ``provider_error``, ``timeout``, ``unreachable``,
    ``malformed_answer``, ``not_configured``); ``ambiguous``: see the module's docstring."""

    outcome: Outcome
    provider_id: str | None = None
    error: str | None = None
    ambiguous: bool = False
    reason: str | None = None


class SmsProvider(Protocol):
    name: str

    async def send(self, to: str, sender: str, body: str, status_callback: str | None) -> SmsAnswer:
        """Send ``body`` to ``to`` (E.164) from ``sender`` (an E.164 number or an alphanumeric sender ID);
        ``status_callback``: where the provider posts its delivery receipts (None: none asked)."""
        ...

    async def probe(self) -> str:
        """A cheap check for ``transfers doctor``: a sentence when it works; raises ``SmsProbeFailed``."""
        ...

    async def aclose(self) -> None: ...


class SmsProbeFailed(Unavailable):
    """``probe`` could not confirm the provider works; the message says why (never the credentials). Something
    the service needs cannot serve now, so it renders as any ``Unavailable`` where no caller catches it."""


class NoSmsProvider:
    """``TRANSFERS_SMS_PROVIDER=none`` (the default in live): each text is logged, never sent; its message is
    ``skipped`` with reason ``not_configured`` (the rendered text stays on the row, as for any message)."""

    name = "none"

    async def send(self, to: str, sender: str, body: str, status_callback: str | None) -> SmsAnswer:
        # The number's end and the length only: the text holds the traveller's links (capabilities).
        log.info("sms_not_sent", provider="none", to_ends=to[-3:], sender=sender, characters=len(body))
        return SmsAnswer(
            "skipped", error="no SMS provider configured (TRANSFERS_SMS_PROVIDER=none)", reason=NO_PROVIDER
        )

    async def probe(self) -> str:
        return "no SMS provider (TRANSFERS_SMS_PROVIDER=none): texts are logged and marked skipped, never sent"

    async def aclose(self) -> None:
        return None


class SandboxSmsProvider:
    """``TRANSFERS_SMS_PROVIDER=sandbox`` (the default in sandbox): the text is kept, not sent. The message
    row holds it (``sent``, a ``sandbox-...`` provider id, the rendered body) and the console's
    ``Messages`` page shows it; no receipt ever comes, so it stays ``sent``."""

    name = "sandbox"

    async def send(self, to: str, sender: str, body: str, status_callback: str | None) -> SmsAnswer:
        provider_id = SANDBOX_ID_PREFIX + secrets.token_hex(12)
        log.info("sms_kept", provider="sandbox", provider_id=provider_id, to_ends=to[-3:], sender=sender)
        return SmsAnswer("sent", provider_id=provider_id)

    async def probe(self) -> str:
        return "sandbox SMS provider: texts are kept on their messages and shown in the console's Messages page"

    async def aclose(self) -> None:
        return None


def provider_for(settings: Settings) -> SmsProvider:
    """The provider ``TRANSFERS_SMS_PROVIDER`` names (sandbox in sandbox, none in live when unset). The
    settings already refused ``twilio`` without its URL, account and token (config.py)."""
    kind = settings.resolved_sms_provider
    if kind == "twilio":
        from transfers.messages.sms.twilio import TwilioProvider

        return TwilioProvider(
            settings.sms_provider_url,
            settings.twilio_account_sid,
            settings.twilio_auth_token,
            timeout_seconds=settings.sms_timeout_seconds,
        )
    if kind == "sandbox":
        return SandboxSmsProvider()
    return NoSmsProvider()
