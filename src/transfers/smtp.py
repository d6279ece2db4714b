"""One SMTP exchange, shared by every e-mail the service sends: partner users' (``hosted/mail.py``) and
travellers' (``messages/transport.py``). ``TRANSFERS_SMTP_URL`` names the server: ``smtps://`` is TLS
from the start, ``smtp://`` plain (with STARTTLS when the server offers it and credentials are given).

Blocking (``smtplib``): callers run it in a worker thread. Every socket operation is bounded by
``timeout``, so a server that accepts and then says nothing costs at most that per step.

A failure says what it means for a retry (docs/rules/messages.md#sending):

* ``permanent``: the server answered a 5xx (a refused sender, recipient or message): sending again
  gets the same answer;
* ``ambiguous``: the exchange broke (a time-out, a dropped connection) after the message's data was
  handed over and before the server's answer to it: the server may have taken it;
* otherwise temporary (a 4xx, a connection that was never made, a failure before the data): nothing
  was taken, a retry is safe.
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Sequence
from email.charset import QP, Charset
from email.header import Header
from email.message import Message
from email.mime.text import MIMEText
from email.policy import compat32
from email.utils import formataddr
from urllib.parse import unquote, urlsplit

# A text in UTF-8, quoted-printable: still readable as sent (accents escaped, the rest as written).
_UTF8 = Charset("utf-8")
_UTF8.body_encoding = QP
# The message's bytes as SMTP carries them: CRLF line ends (smtplib sends bytes as given).
_WIRE = compat32.clone(linesep="\r\n")


class SmtpFailure(smtplib.SMTPException):
    """The exchange did not end with the server taking the message; ``code`` is the server's answer
    when it gave one."""

    def __init__(self, text: str, *, code: int | None = None, permanent: bool = False, ambiguous: bool = False):
        super().__init__(text)
        self.code = code
        self.permanent = permanent
        self.ambiguous = ambiguous


def compose(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    body: str,
    sender_name: str | None = None,
    reply_to: str | None = None,
) -> Message:
    """A plain-text e-mail (ASCII as 7 bit, anything else UTF-8 quoted-printable). ``sender_name``: shown
    before the sender's address (a brand, quoted or
    encoded as the standard asks); ``reply_to``: where an answer goes, when not to the sender. Built with
    the classic ``email`` API (``compat32``): the same bytes on the wire as ``EmailMessage``'s for these
    headers, at a fraction of the cost of its header parsing (one e-mail per traveller message)."""
    message = MIMEText(body, "plain", "us-ascii" if body.isascii() else _UTF8)  # type: ignore[arg-type]  # a Charset is documented
    message["From"] = formataddr((sender_name, sender), "utf-8") if sender_name else sender
    message["To"] = ", ".join(to)
    message["Subject"] = Header(subject, "utf-8").encode() if not subject.isascii() else subject
    if reply_to:
        message["Reply-To"] = reply_to
    return message


def send_blocking(
    smtp_url: str, envelope_from: str, recipients: Sequence[str], message: Message, timeout: float
) -> None:
    """Hand ``message`` to the server at ``smtp_url`` for ``recipients``; returns once the server took
    it, raises ``SmtpFailure`` otherwise."""
    parts = urlsplit(smtp_url)
    host = parts.hostname or "localhost"
    handed_over = taken = False
    client: smtplib.SMTP | None = None
    try:
        if parts.scheme == "smtps":
            client = smtplib.SMTP_SSL(host, parts.port or 465, timeout=timeout, context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, parts.port or 25, timeout=timeout)
        client.ehlo_or_helo_if_needed()
        if parts.scheme == "smtp" and parts.username and client.has_extn("starttls"):
            client.starttls(context=ssl.create_default_context())
            client.ehlo()
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        _answered(client.mail(envelope_from), "MAIL FROM", (250,))
        for recipient in recipients:
            _answered(client.rcpt(recipient), f"RCPT TO {recipient}", (250, 251))
        handed_over = True  # from here an exchange cut short may have left the message with the server
        _answered(client.data(message.as_bytes(policy=_WIRE)), "DATA", (250,))
        taken = True
        client.quit()  # a failing goodbye changes nothing: the server took the message
    except SmtpFailure:
        raise
    except smtplib.SMTPResponseException as exc:  # an answer with a code: the server said no
        if not taken:
            raise SmtpFailure(
                _said(exc.smtp_code, exc.smtp_error), code=exc.smtp_code, permanent=exc.smtp_code >= 500
            ) from exc
    except (OSError, smtplib.SMTPException) as exc:
        if taken:
            return
        if handed_over:
            raise SmtpFailure(f"no answer to the message's data: {type(exc).__name__}: {exc}", ambiguous=True) from exc
        raise SmtpFailure(f"{type(exc).__name__}: {exc}") from exc
    finally:
        if client is not None:
            client.close()


def _answered(reply: tuple[int, bytes], step: str, ok: tuple[int, ...]) -> None:
    code, text = reply
    if code not in ok:
        raise SmtpFailure(f"{step}: {_said(code, text)}", code=code, permanent=code >= 500)


def _said(code: int, text: bytes | str) -> str:
    words = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return f"{code} {words}"[:500]
