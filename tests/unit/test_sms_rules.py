"""The pure rules of texts to travellers (docs/rules/messages.md#sending, #opt-out): Twilio's signature
on Twilio's own published example, who a text goes from, what Twilio's answers mean, the settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from transfers.config import Settings
from transfers.messages.sms import senders, signature
from transfers.messages.sms.senders import FOOTER, NoSms, SmsRoute
from transfers.messages.sms.twilio import judge

# Twilio's documented example (its security docs and helper libraries' tests): this URL, these fields and
# auth token 12345 are signed RSOYDt4T1cUTdK1PDd93/VVr8B8=; the later edition of the example, with the
# numbers ending 310, GvWf1cFY/Q7PnoempGyD5oXAezc=.
TWILIO_URL = "https://mycompany.com/myapp.php?foo=1&bar=2"
TWILIO_FIELDS = {
    "CallSid": "CA1234567890ABCDE",
    "Caller": "+14158675309",
    "Digits": "1234",
    "From": "+14158675309",
    "To": "+18005551212",
}


def test_twilio_s_published_examples() -> None:
    assert signature.compute("12345", TWILIO_URL, TWILIO_FIELDS.items()) == "RSOYDt4T1cUTdK1PDd93/VVr8B8="
    later = {**TWILIO_FIELDS, "Caller": "+14158675310", "From": "+14158675310"}
    assert signature.compute("12345", TWILIO_URL, later.items()) == "GvWf1cFY/Q7PnoempGyD5oXAezc="
    # the order the fields arrive in does not matter; they are sorted by name
    assert signature.is_valid("12345", TWILIO_URL, reversed(list(later.items())), "GvWf1cFY/Q7PnoempGyD5oXAezc=")


@pytest.mark.parametrize(
    ("token", "url", "fields", "given"),
    [
        ("12345", TWILIO_URL, TWILIO_FIELDS, None),  # no header
        ("12345", TWILIO_URL, TWILIO_FIELDS, ""),
        ("54321", TWILIO_URL, TWILIO_FIELDS, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),  # another account's token
        ("", TWILIO_URL, TWILIO_FIELDS, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),  # no token configured
        ("12345", TWILIO_URL.replace("foo=1", "foo=2"), TWILIO_FIELDS, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
        ("12345", TWILIO_URL, {**TWILIO_FIELDS, "Digits": "1235"}, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
        ("12345", TWILIO_URL, {**TWILIO_FIELDS, "Body": ""}, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),  # a field added
        ("12345", TWILIO_URL, TWILIO_FIELDS, "RSOYDt4T1cUTdK1PDd93/VVr8B8"),  # cut short
    ],
)
def test_anything_changed_is_refused(token: str, url: str, fields: dict[str, str], given: str | None) -> None:
    assert not signature.is_valid(token, url, fields.items(), given)


def test_the_default_port_is_accepted_written_or_not() -> None:
    given = signature.compute("12345", TWILIO_URL, TWILIO_FIELDS.items())
    assert signature.is_valid("12345", "https://mycompany.com:443/myapp.php?foo=1&bar=2", TWILIO_FIELDS.items(), given)
    with_port = signature.compute("12345", "https://mycompany.com:443/x", [])
    assert signature.is_valid("12345", "https://mycompany.com/x", [], with_port)
    assert not signature.is_valid(
        "12345", "https://mycompany.com:8443/myapp.php?foo=1&bar=2", TWILIO_FIELDS.items(), given
    )


def test_a_field_sent_twice_signs_each_value_sorted() -> None:
    once = signature.compute("t", "https://a/b", [("A", "2"), ("A", "1"), ("B", "x")])
    assert once == signature.compute("t", "https://a/b", [("B", "x"), ("A", "1"), ("A", "2")])
    import base64
    import hashlib
    import hmac

    expected = base64.b64encode(hmac.new(b"t", b"https://a/bA1A2Bx", hashlib.sha1).digest()).decode()
    assert once == expected


ROUTE = {"client_sender": "Acme Cars", "long_code": "+15017122661", "default_sender": "Transfers"}


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        # the US (numbers typed "fixed line or mobile") and Canada: the long code and the English STOP line
        ("+14155552671", SmsRoute("+14155552671", "+15017122661", FOOTER)),
        ("+16135550123", SmsRoute("+16135550123", "+15017122661", FOOTER)),
        ("+1 787 555 0123", SmsRoute("+17875550123", "+15017122661", FOOTER)),  # Puerto Rico, on the US plan
        # elsewhere: the client's sender
        ("+447911123456", SmsRoute("+447911123456", "Acme Cars")),
        ("+33 6 12 34 56 78", SmsRoute("+33612345678", "Acme Cars")),
        ("+351912345678", SmsRoute("+351912345678", "Acme Cars")),
        # fixed lines get no text; numbers that cannot be read or are not valid get none either
        ("+442071838750", NoSms("not_mobile")),
        ("+4930123456", NoSms("not_mobile")),
        ("07911123456", NoSms("no_address")),
        ("+44791112", NoSms("no_address")),
        ("not a number", NoSms("no_address")),
        ("", NoSms("no_address")),
    ],
)
def test_who_a_text_goes_from(number: str, expected: SmsRoute | NoSms) -> None:
    assert senders.route(number, **ROUTE) == expected


def test_without_a_client_sender_the_service_s_is_used() -> None:
    assert senders.route("+447911123456", **{**ROUTE, "client_sender": None}).sender == "Transfers"  # type: ignore[arg-type]
    assert senders.route("+447911123456", **{**ROUTE, "client_sender": "  "}).sender == "Transfers"
    # under none/sandbox there may be no long code: the default sender stands in
    assert senders.route("+14155552671", **{**ROUTE, "long_code": ""}).sender == "Transfers"


def test_the_stop_line_is_english_and_last() -> None:
    route = senders.route("+14155552671", **ROUTE)
    assert isinstance(route, SmsRoute)
    assert route.text("Ihr Fahrer ist da.") == "Ihr Fahrer ist da.\nReply STOP to opt out."
    assert senders.e164("+1 (415) 555-2671") == "+14155552671" and senders.e164("12345") is None


@pytest.mark.parametrize(
    ("status", "body", "outcome", "ambiguous", "reason"),
    [
        (201, b'{"sid": "SM0123", "status": "queued"}', "sent", False, None),
        (200, b'{"sid": "SM0123"}', "sent", False, None),
        (201, b'{"status": "queued"}', "retry", True, "malformed_answer"),
        (201, b'{"sid": ""}', "retry", True, "malformed_answer"),
        (201, b'{"sid": 12}', "retry", True, "malformed_answer"),
        (201, b"not json", "retry", True, "malformed_answer"),
        (201, b"[1, 2]", "retry", True, "malformed_answer"),
        (201, b"\xff\xfe", "retry", True, "malformed_answer"),
        (429, b'{"code": 20429, "message": "Too Many Requests"}', "retry", False, "rate_limited"),
        (500, b"", "retry", False, "provider_error"),
        (503, b"<html>down</html>", "retry", False, "provider_error"),
        (301, b"", "retry", False, "provider_error"),
        (400, b'{"code": 21211, "message": "The To number is not valid."}', "failed", False, "invalid_number"),
        (400, b'{"code": 21610, "message": "unsubscribed"}', "failed", False, "unsubscribed"),
        (400, b'{"code": 21614, "message": "not a mobile"}', "failed", False, "not_mobile"),
        (400, b'{"code": "21211"}', "failed", False, "refused"),
        (401, b'{"code": 20003, "message": "Authenticate"}', "failed", False, "refused"),
        (404, b"nope", "failed", False, "refused"),
    ],
)
def test_what_twilio_s_answer_means(
    status: int, body: bytes, outcome: str, ambiguous: bool, reason: str | None
) -> None:
    answer = judge(status, body)
    assert (answer.outcome, answer.ambiguous, answer.reason) == (outcome, ambiguous, reason)
    assert (answer.provider_id is not None) == (outcome == "sent")


def test_a_long_twilio_error_is_one_bounded_line() -> None:
    answer = judge(400, b'{"code": 21211, "message": "' + b"x\\n" * 500 + b'"}')
    assert answer.error is not None and len(answer.error) <= 300 and "\n" not in answer.error


TWILIO = {
    "sms_provider": "twilio",
    "twilio_account_sid": "AC" + "a" * 32,
    "twilio_auth_token": "token",
    "sms_long_code": "+15017122661",
}


def test_the_provider_defaults_by_environment() -> None:
    assert Settings(environment="sandbox").resolved_sms_provider == "sandbox"
    assert Settings(environment="live").resolved_sms_provider == "none"
    assert Settings(**TWILIO).sms_provider_url == "https://api.twilio.com"


@pytest.mark.parametrize(
    ("change", "variable", "words"),
    [
        ({"twilio_account_sid": ""}, "twilio_account_sid", "needs the Twilio account's SID"),
        ({"twilio_auth_token": ""}, "twilio_auth_token", "needs the Twilio account's auth token"),
        ({"sms_provider_url": ""}, "sms_provider_url", "needs Twilio's API base URL"),
        ({"sms_long_code": ""}, "sms_long_code", "US and Canadian"),
        ({"twilio_account_sid": "SK" + "a" * 32}, "twilio_account_sid", "AC followed by 32"),
        ({"sms_long_code": "5017122661"}, "sms_long_code", "E.164"),
        ({"sms_provider_url": "api.twilio.com"}, "sms_provider_url", "http(s) base URL"),
        ({"sms_sender": "Acme!"}, "sms_sender", "letters, digits or spaces"),
        ({"sms_sender": "123456"}, "sms_sender", "at least one a letter"),
        ({"sms_sender": "Acme Cars Ltd"}, "sms_sender", "3 to 11"),
    ],
)
def test_twilio_without_what_it_needs_is_refused_at_start(change: dict[str, str], variable: str, words: str) -> None:
    with pytest.raises(ValidationError) as raised:
        Settings(**{**TWILIO, **change})
    from transfers.ops.settings_errors import describe_validation_error

    [line] = describe_validation_error(raised.value)
    assert line.startswith(f"TRANSFERS_{variable.upper()}=") and words in line


def test_the_auth_token_is_never_printed() -> None:
    with pytest.raises(ValidationError) as raised:
        Settings(**{**TWILIO, "twilio_account_sid": "bad", "twilio_auth_token": "s3cret-value"})
    from transfers.ops.settings_errors import describe_validation_error

    assert "s3cret-value" not in " ".join(describe_validation_error(raised.value))


def test_live_refuses_the_sandbox_provider() -> None:
    live = {"environment": "live", "secret_key": "k" * 40}
    assert any("SMS_PROVIDER=sandbox" in p for p in Settings(**live, sms_provider="sandbox").deployment_problems())
    assert not any("SMS" in p for p in Settings(**live).deployment_problems())
    assert not any("SMS" in p for p in Settings(**live, **TWILIO).deployment_problems())


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("STOP", "stop"),
        ("stop", "stop"),
        ("  Stop\n", "stop"),
        ("\tSTOPALL ", "stop"),
        ("Unsubscribe", "stop"),
        ("cancel", "stop"),
        ("END", "stop"),
        ("Quit", "stop"),
        ("START", "start"),
        ("unstop", "start"),
        ("please stop texting", None),
        ("STOP.", None),
        ("stop it", None),
        ("S T O P", None),
        ("STOPP", None),
        ("STARTED", None),
        ("", None),
        ("YES", None),
    ],
)
def test_only_a_whole_word_reply_is_an_instruction(body: str, said: str | None) -> None:
    from transfers.messages.replies import instruction

    assert instruction(body) == said
