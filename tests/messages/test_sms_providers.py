"""The SMS providers (docs/rules/messages.md#sending) against a local server answering like Twilio's
Messages API (tests/fake_twilio.py): what each of its answers becomes, what it was sent, bounded waits."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio
from tests.servers import free_port
from transfers.config import Settings
from transfers.messages.sms.provider import (
    NO_PROVIDER,
    NoSmsProvider,
    SandboxSmsProvider,
    SmsProbeFailed,
    provider_for,
    status_callback_url,
)
from transfers.messages.sms.twilio import TwilioProvider

TO = "+447911123456"
CALLBACK = "https://transfers.example.com/hooks/sms/twilio/status"


@pytest.fixture
async def twilio() -> AsyncIterator[FakeTwilio]:
    fake = await FakeTwilio().start()
    yield fake
    await fake.stop()


@pytest.fixture
async def provider(twilio: FakeTwilio) -> AsyncIterator[TwilioProvider]:
    sms = TwilioProvider(twilio.url, ACCOUNT_SID, AUTH_TOKEN, timeout_seconds=0.5)
    yield sms
    await sms.aclose()


async def test_a_text_is_posted_as_twilio_publishes_it_and_its_sid_kept(
    twilio: FakeTwilio, provider: TwilioProvider
) -> None:
    answer = await provider.send(TO, "Acme", "Your driver is Sam.\nhttps://x/t/abc", CALLBACK)
    assert answer.outcome == "sent" and not answer.ambiguous and answer.error is None
    assert answer.provider_id is not None and answer.provider_id.startswith("SM") and len(answer.provider_id) == 34
    [request] = twilio.requests
    assert request.path == f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json" and request.method == "POST"
    assert (request.user, request.password) == (ACCOUNT_SID, AUTH_TOKEN)
    assert request.form == {
        "To": TO,
        "From": "Acme",
        "Body": "Your driver is Sam.\nhttps://x/t/abc",
        "StatusCallback": CALLBACK,
    }
    assert twilio.messages[answer.provider_id]["status"] == "queued"


async def test_without_a_status_callback_none_is_sent(twilio: FakeTwilio, provider: TwilioProvider) -> None:
    assert (await provider.send(TO, "Acme", "hello", None)).outcome == "sent"
    assert "StatusCallback" not in twilio.requests[0].form


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("429", "rate_limited"), ("503", "provider_error"), ("500", "provider_error"), ("html503", "provider_error")],
)
async def test_a_busy_or_broken_twilio_is_tried_again(
    twilio: FakeTwilio, provider: TwilioProvider, mode: str, reason: str
) -> None:
    twilio.queue = [mode]
    answer = await provider.send(TO, "Acme", "hello", CALLBACK)
    assert (answer.outcome, answer.ambiguous, answer.reason, answer.provider_id) == ("retry", False, reason, None)
    assert answer.error is not None and f"HTTP {mode[-3:]}" in answer.error
    # the next try goes through, once
    again = await provider.send(TO, "Acme", "hello", CALLBACK)
    assert again.outcome == "sent" and len(twilio.sent) == 1


@pytest.mark.parametrize(
    ("listed", "code", "reason"), [("invalid", "21211", "invalid_number"), ("unsubscribed", "21610", "unsubscribed")]
)
async def test_a_refused_number_fails_at_once(
    twilio: FakeTwilio, provider: TwilioProvider, listed: str, code: str, reason: str
) -> None:
    getattr(twilio, listed).add(TO)
    answer = await provider.send(TO, "Acme", "hello", CALLBACK)
    assert (answer.outcome, answer.ambiguous, answer.reason) == ("failed", False, reason)
    assert answer.error is not None and f"code {code}" in answer.error and "HTTP 400" in answer.error
    assert "hello" not in answer.error  # the text itself never goes into an error


async def test_wrong_credentials_are_a_refusal(twilio: FakeTwilio) -> None:
    sms = TwilioProvider(twilio.url, ACCOUNT_SID, "not-the-token", timeout_seconds=0.5)
    try:
        answer = await sms.send(TO, "Acme", "hello", None)
        assert (answer.outcome, answer.reason) == ("failed", "refused")
        assert answer.error is not None and "HTTP 401" in answer.error and "20003" in answer.error
        with pytest.raises(SmsProbeFailed, match="refused the account SID and auth token"):
            await sms.probe()
    finally:
        await sms.aclose()
    assert "not-the-token" not in (answer.error or "")


async def test_a_created_message_without_a_readable_sid_is_not_sent_again_blindly(
    twilio: FakeTwilio, provider: TwilioProvider
) -> None:
    twilio.queue = ["malformed"]
    answer = await provider.send(TO, "Acme", "hello", CALLBACK)
    assert (answer.outcome, answer.ambiguous, answer.reason) == ("retry", True, "malformed_answer")
    assert len(twilio.messages) == 1  # Twilio did take it: the delivery engine must not resend


async def test_a_twilio_that_takes_the_request_and_hangs_is_ambiguous_within_the_deadline(
    twilio: FakeTwilio, provider: TwilioProvider
) -> None:
    twilio.queue = ["hang"]
    started = time.monotonic()
    answer = await provider.send(TO, "Acme", "hello", CALLBACK)
    assert time.monotonic() - started < 2.0
    assert (answer.outcome, answer.ambiguous, answer.reason) == ("retry", True, "timeout")
    assert len(twilio.requests) == 1  # it reached Twilio
    assert answer.error is not None and "may have taken" in answer.error


async def test_a_twilio_that_cannot_be_reached_is_tried_again_and_not_ambiguous() -> None:
    sms = TwilioProvider(f"http://127.0.0.1:{free_port()}", ACCOUNT_SID, AUTH_TOKEN, timeout_seconds=0.5)
    try:
        answer = await sms.send(TO, "Acme", "hello", None)
    finally:
        await sms.aclose()
    assert (answer.outcome, answer.ambiguous, answer.reason) == ("retry", False, "unreachable")


async def test_the_probe_reads_the_account_and_sends_nothing(twilio: FakeTwilio, provider: TwilioProvider) -> None:
    sentence = await provider.probe()
    assert ACCOUNT_SID in sentence and twilio.url in sentence
    assert [r.path for r in twilio.requests] == [f"/2010-04-01/Accounts/{ACCOUNT_SID}.json"] and twilio.messages == {}


async def test_sandbox_keeps_and_none_skips() -> None:
    kept = await SandboxSmsProvider().send(TO, "Acme", "hello", None)
    assert kept.outcome == "sent" and kept.provider_id is not None and kept.provider_id.startswith("sandbox-")
    skipped = await NoSmsProvider().send(TO, "Acme", "hello", None)
    assert (skipped.outcome, skipped.reason, skipped.provider_id) == ("skipped", NO_PROVIDER, None)


async def test_the_provider_follows_the_setting(twilio: FakeTwilio) -> None:
    assert provider_for(Settings(environment="sandbox")).name == "sandbox"
    assert provider_for(Settings(environment="live")).name == "none"
    assert provider_for(Settings(environment="sandbox", sms_provider="none")).name == "none"
    chosen = provider_for(
        Settings(
            sms_provider="twilio",
            sms_provider_url=twilio.url,
            twilio_account_sid=ACCOUNT_SID,
            twilio_auth_token=AUTH_TOKEN,
            sms_long_code="+15017122661",
        )
    )
    assert isinstance(chosen, TwilioProvider) and chosen.messages_url.startswith(twilio.url)
    await chosen.aclose()
    assert status_callback_url("https://t.example.com/") == "https://t.example.com/hooks/sms/twilio/status"
