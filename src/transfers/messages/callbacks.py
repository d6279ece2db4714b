"""What the SMS provider posts to the service (docs/rules/messages.md#opt-out): replies to our texts and
delivery receipts, each checked for Twilio's signature before anything is read or recorded.

The routes (``api/routes/sms_hooks.py``) hand over the path, the form's fields as sent and the
``X-Twilio-Signature`` header; a request that is not signed by the account's auth token for
``TRANSFERS_PUBLIC_BASE_URL`` + its path is refused and records nothing. Without ``twilio`` configured
(no auth token) no request can be signed, so every one is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from transfers.config import Settings
from transfers.messages import delivery, receipts_repository, replies
from transfers.messages.replies import Instruction
from transfers.messages.sms import signature
from transfers.services import Services

log = structlog.get_logger("transfers.messages.sms")

Fields = Sequence[tuple[str, str]]
# Twilio's MessageStatus values that end a sent text; the others (queued, sending, sent, accepted,
# scheduled, read, canceled) change nothing.
UNDELIVERED = frozenset({"undelivered", "failed"})


def signed(settings: Settings, path_and_query: str, fields: Fields, given: str | None) -> bool:
    """Whether Twilio signed this request: over ``TRANSFERS_PUBLIC_BASE_URL`` + the path (and query)."""
    return signature.is_valid(settings.twilio_auth_token, settings.service_url + path_and_query, fields, given)


def field(fields: Fields, name: str) -> str:
    """The first value of ``name`` in the form ("" when absent)."""
    return next((value for key, value in fields if key == name), "")


async def reply(svc: Services, fields: Fields) -> Instruction | None:
    """An incoming text: STOP and its synonyms stop every text to the sender's number, START lifts that
    (``replies.py``); any other text is left alone. What the text was (None: nothing recorded)."""
    async with svc.db.write() as conn:
        said = await replies.record_reply(conn, field(fields, "From"), field(fields, "Body"), svc.clock.now())
    if said is not None:
        log.info("sms_reply_recorded", instruction=said, from_ends=field(fields, "From")[-3:])
    return said


async def receipt(svc: Services, fields: Fields) -> str | None:
    """A delivery receipt: ``delivered`` makes the ``sent`` text ``delivered``; ``undelivered`` or ``failed``
    makes it ``failed`` (reason ``undelivered``, the provider's error code in ``last_error``) and, for the
    news the client must hear of, writes ``booking.message_failed`` in the same transaction. The text is
    found by the provider's id (``MessageSid``); a receipt for an unknown id, or for a text no longer
    ``sent``, changes nothing. Returns the new status (None: nothing changed)."""
    sid = field(fields, "MessageSid") or field(fields, "SmsSid")
    status = (field(fields, "MessageStatus") or field(fields, "SmsStatus")).strip().lower()
    if not sid or (status != "delivered" and status not in UNDELIVERED):
        return None
    now = svc.clock.now()
    async with svc.db.write() as conn:
        if status == "delivered":
            moved = await receipts_repository.mark_delivered(conn, sid, now)
        else:
            code = field(fields, "ErrorCode").strip()[:16]
            error = f"the provider reported the text {status}" + (f" (error {code})" if code else "")
            moved = await receipts_repository.mark_undelivered(conn, sid, "undelivered", error, now)
            if moved is not None:
                await delivery.report_failure(conn, moved.id, now)
    if moved is None:
        return None
    log.info("sms_receipt_recorded", message_id=moved.id, status=moved.status)
    return moved.status
