"""``transfers doctor``'s rows for the messages to travellers (docs/rules/messages.md#sending): can the
service send e-mail (``TRANSFERS_SMTP_URL``: one bounded connection, greeting, EHLO, the login when the
URL has one, NOOP, QUIT; nothing is sent) and which SMS provider it uses, with the settings that one
needs. Rows are ``(check, verdict, detail)`` as ``exposure_rows`` gives them."""

from __future__ import annotations

import asyncio
import smtplib
import socket
import ssl
from urllib.parse import unquote, urlsplit

from transfers.config import Settings
from transfers.messages.sms.provider import SmsProbeFailed, provider_for
from transfers.ops.masking import mask_url, scrub

# At most this long for the whole SMTP exchange, whatever TRANSFERS_SMTP_TIMEOUT_SECONDS says: the doctor
# answers in seconds even against a server that accepts the connection and never speaks.
SMTP_PROBE_SECONDS = 5.0

ProbeRow = tuple[str, str, str]


def _said(code: int, answer: bytes) -> str:
    return f"answered {code} {answer.decode('utf-8', 'replace')}".strip()


def _smtp_exchange(url: str, timeout: float) -> tuple[bool, str]:
    """(True, the server's EHLO name) after greeting, EHLO, optional STARTTLS and login, NOOP; (False, what
    it answered) when EHLO or NOOP is refused. Transport failures and a refused login raise smtplib's own."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    client: smtplib.SMTP
    if parts.scheme == "smtps":
        client = smtplib.SMTP_SSL(host, parts.port or 465, timeout=timeout, context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(host, parts.port or 25, timeout=timeout)
    with client:
        code, answer = client.ehlo()
        if code != 250:
            return False, _said(code, answer)
        if parts.scheme == "smtp" and parts.username and client.has_extn("starttls"):
            client.starttls(context=ssl.create_default_context())
            client.ehlo()
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        code, noop = client.noop()
        if code != 250:
            return False, _said(code, noop)
        return True, answer.decode("utf-8", "replace").splitlines()[0] if answer else host


def _reason(exc: BaseException) -> str:
    """What went wrong, in words (never only an exception's class name)."""
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"refused the login ({exc.smtp_code})"
    if isinstance(exc, smtplib.SMTPResponseException):
        said = exc.smtp_error if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error).encode()
        return _said(exc.smtp_code, said)
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        # smtplib reports a read that timed out as a disconnection ("...: timed out")
        return "no answer in time" if "timed out" in str(exc) else "closed the connection"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "no answer in time"
    if isinstance(exc, ConnectionRefusedError):
        return "refused the connection"
    if isinstance(exc, socket.gaierror):
        return "host name not found"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed: {exc.reason or exc}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else "unreachable"


async def smtp_row(cfg: Settings) -> ProbeRow:
    """PASS when the SMTP server answers and accepts the login; FAIL when it does not; WARN when no
    server is set (e-mails, partner e-mails and travellers' messages alike, are then logged, not sent)."""
    url = cfg.smtp_url
    if not url:
        return ("smtp", "WARN", "TRANSFERS_SMTP_URL is not set: e-mails are logged, not sent")
    timeout = min(cfg.smtp_timeout_seconds, SMTP_PROBE_SECONDS)
    shown = mask_url(url)
    try:
        # The socket timeout bounds each step; wait_for bounds the whole exchange (the thread then ends
        # at its next socket timeout).
        answered, name = await asyncio.wait_for(asyncio.to_thread(_smtp_exchange, url, timeout), timeout * 3)
    except Exception as exc:  # every failure of a probe is a row, never a crash of the report
        why = _reason(exc) if not isinstance(exc, asyncio.TimeoutError) else "no answer in time"
        return ("smtp", "FAIL", scrub(f"{shown} {why}", [urlsplit(url).password]))
    if not answered:
        return ("smtp", "FAIL", scrub(f"{shown} {name}", [urlsplit(url).password]))
    return ("smtp", "PASS", f"{shown} answers ({name[:80]}); sender {cfg.smtp_from}")


async def sms_row(cfg: Settings) -> ProbeRow:
    """The SMS provider in use (``TRANSFERS_SMS_PROVIDER``; the settings already refused ``twilio`` without
    its URL, account, token and long code): ``none`` WARN, ``sandbox`` PASS in sandbox, ``twilio`` one read
    of the account (the provider's own probe: the URL and the credentials proven, nothing sent)."""
    kind = cfg.resolved_sms_provider
    if kind == "none":
        return ("sms provider", "WARN", "none: text messages are logged, not sent (TRANSFERS_SMS_PROVIDER)")
    if kind == "sandbox":
        verdict = "PASS" if cfg.is_sandbox else "WARN"
        return (
            "sms provider",
            verdict,
            "sandbox: text messages are kept and shown in the console's Messages, not sent",
        )
    provider = provider_for(cfg)
    try:
        detail = await provider.probe()
    except SmsProbeFailed as exc:
        return ("sms provider", "FAIL", str(exc))
    finally:
        await provider.aclose()
    return ("sms provider", "PASS", f"{detail}; long code {cfg.sms_long_code}; default sender {cfg.sms_sender}")
