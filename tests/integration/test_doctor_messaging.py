"""``transfers doctor``'s rows for the messages to travellers (docs/rules/messages.md#sending), against real
servers on loopback: an SMTP server (aiosmtpd) that answers, one that asks for a login and refuses it, one
that accepts connections and never speaks (bounded), a closed port; and the SMS provider's settings."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio
from transfers.config import Settings
from transfers.ops import messaging_probe
from transfers.ops.messaging_probe import sms_row, smtp_row


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Quiet:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # pragma: no cover - never sent
        return "250 OK"


def _only(login: bytes, password: bytes) -> Any:
    def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (login, password)
        return AuthResult(success=ok, handled=False)

    return check


@pytest.fixture
def smtp_port() -> Iterator[int]:
    port = _free_port()
    controller = Controller(_Quiet(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


@pytest.fixture
def smtp_with_login() -> Iterator[int]:
    port = _free_port()
    controller = Controller(
        _Quiet(),
        hostname="127.0.0.1",
        port=port,
        authenticator=_only(b"mailer", b"right"),
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """Accepts connections and never says a word (no SMTP greeting)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(ConnectionError, OSError):
            while await reader.read(65536):
                pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        for writer in held:
            writer.close()
        server.close()


async def test_no_smtp_url_is_a_warning() -> None:
    check, verdict, detail = await smtp_row(Settings())
    assert (check, verdict) == ("smtp", "WARN") and "TRANSFERS_SMTP_URL" in detail and "logged" in detail


async def test_an_answering_server_passes(smtp_port: int) -> None:
    check, verdict, detail = await smtp_row(Settings(smtp_url=f"smtp://127.0.0.1:{smtp_port}"))
    assert (check, verdict) == ("smtp", "PASS"), detail
    assert f"127.0.0.1:{smtp_port} answers" in detail


async def test_a_refused_login_fails_and_the_password_is_never_shown(smtp_with_login: int) -> None:
    good = await smtp_row(Settings(smtp_url=f"smtp://mailer:right@127.0.0.1:{smtp_with_login}"))
    assert good[1] == "PASS", good
    check, verdict, detail = await smtp_row(Settings(smtp_url=f"smtp://mailer:wrong-pass@127.0.0.1:{smtp_with_login}"))
    assert (check, verdict) == ("smtp", "FAIL") and "refused the login" in detail, detail
    assert "wrong-pass" not in detail and "mailer:***@" in detail


async def test_a_closed_port_fails_in_words() -> None:
    port = _free_port()
    check, verdict, detail = await smtp_row(Settings(smtp_url=f"smtp://127.0.0.1:{port}"))
    assert (check, verdict) == ("smtp", "FAIL") and "refused the connection" in detail, detail


async def test_a_server_that_never_speaks_fails_within_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messaging_probe, "SMTP_PROBE_SECONDS", 0.5)
    async with silent_server() as port:
        started = time.monotonic()
        check, verdict, detail = await smtp_row(Settings(smtp_url=f"smtp://127.0.0.1:{port}"))
        took = time.monotonic() - started
    assert (check, verdict) == ("smtp", "FAIL") and "no answer in time" in detail, detail
    assert took < 3.0, took


async def test_the_sms_provider_row_names_the_provider_and_proves_twilios_credentials() -> None:
    check, verdict, detail = await sms_row(Settings(environment="sandbox"))
    assert (check, verdict) == ("sms provider", "PASS") and detail.startswith("sandbox")
    assert (await sms_row(Settings(environment="live", secret_key="k")))[1:] == (
        "WARN",
        "none: text messages are logged, not sent (TRANSFERS_SMS_PROVIDER)",
    )
    twilio = await FakeTwilio().start()
    try:

        def settings(token: str) -> Settings:
            return Settings(
                sms_provider="twilio",
                sms_provider_url=twilio.url,
                twilio_account_sid=ACCOUNT_SID,
                twilio_auth_token=token,
                sms_long_code="+12025550123",
            )

        check, verdict, detail = await sms_row(settings(AUTH_TOKEN))
        assert (check, verdict) == ("sms provider", "PASS"), detail
        assert ACCOUNT_SID in detail and "long code +12025550123" in detail
        check, verdict, detail = await sms_row(settings("not-the-token"))
        assert (check, verdict) == ("sms provider", "FAIL") and "refused the account SID and auth token" in detail
        assert "not-the-token" not in detail
        assert [r.method for r in twilio.requests] == ["GET", "GET"]  # the account read; nothing sent
    finally:
        await twilio.stop()
