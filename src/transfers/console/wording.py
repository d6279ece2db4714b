"""Delivery errors in words for the console: a stored error is an exception class name
(``ClientConnectorError``, ``ConnectError``, ``ReadTimeout``), ``HTTP 500``, ``no answer within 5s`` or
a sentence already; an operator reads "connection refused", "timed out after 5 s", "answered HTTP 500
(Internal Server Error)". Pure: the pages call ``in_words`` on what the delivery engine stored."""

from __future__ import annotations

import re
from http import HTTPStatus

# Transport failures by the class name recorded (aiohttp's, httpx's, the builtins' and the names
# partners/client.py reports them under), what an operator should read for each.
_BY_CLASS: dict[str, str] = {
    "ClientConnectorError": "connection refused or host unreachable",
    "ClientConnectorDNSError": "host name not found",
    "ClientConnectorCertificateError": "TLS certificate not valid",
    "ClientConnectorSSLError": "TLS handshake failed",
    "ClientSSLError": "TLS handshake failed",
    "SSLError": "TLS handshake failed",
    "ConnectError": "connection refused or host unreachable",
    "ConnectionRefusedError": "connection refused",
    "ConnectTimeout": "timed out while connecting",
    "ServerTimeoutError": "timed out waiting for the answer",
    "ReadTimeout": "timed out waiting for the answer",
    "WriteTimeout": "timed out while sending",
    "PoolTimeout": "timed out waiting for a free connection",
    "TimeoutError": "timed out",
    "ServerDisconnectedError": "closed the connection without answering",
    "RemoteProtocolError": "closed the connection or answered something that is not HTTP",
    "ClientPayloadError": "the answer was cut off",
    "ClientResponseError": "the answer is not valid HTTP",
    "ClientOSError": "connection reset while sending or reading",
    "ConnectionResetError": "connection reset while sending or reading",
    "ReadError": "connection reset while sending or reading",
    "WriteError": "connection reset while sending",
    "InvalidURL": "the URL is not valid",
    "InvalidUrlClientError": "the URL is not valid",
    "TooManyRedirects": "answered with a redirect, which is not followed",
}
_HTTP = re.compile(r"^HTTP (\d{3})$")
_NO_ANSWER = re.compile(r"^no answer within ([\d.]+) ?s$")
_GAVE_UP = re.compile(r"^(.*?); (gave up .*)$", re.S)  # the delivery engine's "<cause>; gave up 24 h after ..."
_CLASS_PREFIX = re.compile(r"^([A-Z][A-Za-z]+(?:Error|Timeout|Exception|URL|Redirects))(?::\s*(.*))?$", re.S)


def http_status_words(status: int) -> str:
    try:
        return f"answered HTTP {status} ({HTTPStatus(status).phrase})"
    except ValueError:
        return f"answered HTTP {status}"


def in_words(error: str | None, http_status: int | None = None) -> str:
    """What went wrong, as a sentence fragment; the stored text when it is not one of the known forms."""
    text = (error or "").strip()
    if not text:
        return http_status_words(http_status) if http_status else "—"
    if match := _GAVE_UP.match(text):  # the cause in words, then when the engine stopped trying
        return f"{in_words(match.group(1), http_status)}; {match.group(2)}"
    if match := _HTTP.match(text):
        return http_status_words(int(match.group(1)))
    if match := _NO_ANSWER.match(text):
        return f"timed out after {float(match.group(1)):g} s"
    if text.startswith("SSRF guard: "):
        return "refused by the SSRF guard: " + text.removeprefix("SSRF guard: ")
    if match := _CLASS_PREFIX.match(text):
        name, detail = match.group(1), (match.group(2) or "")
        if "refused" in detail.lower() or "connect call failed" in detail.lower():
            return "connection refused"
        if "name or service not known" in detail.lower() or "nodename nor servname" in detail.lower():
            return "host name not found"
        if name in _BY_CLASS:
            return _BY_CLASS[name]
    if http_status and http_status >= 300:
        return f"{http_status_words(http_status)}: {text}"
    return text
