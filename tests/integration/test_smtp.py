"""The shared SMTP exchange (``transfers/smtp.py``) against a real server on loopback: a message taken,
the sender's name and Reply-To, and what each failure means for a retry: a 5xx permanent, a 4xx
temporary, a connection never made temporary, a server that hangs after the data ambiguous, within
the timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator
from email.message import Message

import pytest

from tests.smtp_server import Inbox, free_port, smtp_server
from transfers import smtp


@pytest.fixture
def server() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


def mail(**kw: str) -> Message:
    return smtp.compose(
        sender="messages@transfers.example",
        to=["ann@example.com"],
        subject="Ihre Fahrt – TB-1",
        body="Grüße aus München\n",
        **kw,
    )


def test_taken_with_the_brand_and_reply_to(server: tuple[Inbox, int]) -> None:
    inbox, port = server
    message = mail(sender_name="Sunny Trips, Ltd.", reply_to="help@sunny.example")
    smtp.send_blocking(f"smtp://127.0.0.1:{port}", "messages@transfers.example", ["ann@example.com"], message, 2)
    ((to, got),) = inbox.messages
    assert to == ["ann@example.com"]
    assert got["From"] == '"Sunny Trips, Ltd." <messages@transfers.example>'
    assert got["Reply-To"] == "help@sunny.example"
    payload = got.get_payload(decode=True)
    assert isinstance(payload, bytes) and payload.decode().splitlines() == ["Grüße aus München"]
    assert got["Subject"] == "Ihre Fahrt – TB-1"


@pytest.mark.parametrize(
    ("where", "answer", "permanent"),
    [
        ("rcpt", "550 5.1.1 no such user", True),
        ("rcpt", "450 4.2.1 mailbox busy", False),
        ("data", "554 5.7.1 spam", True),
        ("data", "451 4.3.0 try later", False),
    ],
)
def test_refusals(server: tuple[Inbox, int], where: str, answer: str, permanent: bool) -> None:
    inbox, port = server
    if where == "rcpt":
        inbox.rcpt_answer = answer
    else:
        inbox.data_answer = answer
    with pytest.raises(smtp.SmtpFailure) as failed:
        smtp.send_blocking(f"smtp://127.0.0.1:{port}", "m@transfers.example", ["ann@example.com"], mail(), 2)
    assert failed.value.code == int(answer[:3])
    assert failed.value.permanent is permanent and failed.value.ambiguous is False
    assert inbox.messages == []


def test_no_server_is_temporary() -> None:
    with pytest.raises(smtp.SmtpFailure) as failed:
        smtp.send_blocking(f"smtp://127.0.0.1:{free_port()}", "m@transfers.example", ["ann@example.com"], mail(), 2)
    assert not failed.value.permanent and not failed.value.ambiguous
    assert "ConnectionRefusedError" in str(failed.value)


def test_a_hang_after_the_data_is_ambiguous_and_bounded(server: tuple[Inbox, int]) -> None:
    inbox, port = server
    inbox.hang = True
    started = time.monotonic()
    with pytest.raises(smtp.SmtpFailure) as failed:
        smtp.send_blocking(f"smtp://127.0.0.1:{port}", "m@transfers.example", ["ann@example.com"], mail(), 0.5)
    assert time.monotonic() - started < 3
    assert failed.value.ambiguous and not failed.value.permanent
    assert inbox.data_seen == 1
