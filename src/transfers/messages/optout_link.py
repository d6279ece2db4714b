"""The opt-out link every message carries (docs/rules/messages.md#opt-out): ``{base}/m/{token}``, one per
booking, channel and address. Pure but for the process's signing key (``public_urls.link_key``).

Why signed rather than stored: a link is written into every message the moment it is rendered, and a
stored token would be a row per (booking, channel, address) written on the send path. The token is
``{signature}{channel letter}{booking id}``: 22 characters of HMAC-SHA256 (128 bits, keyed from
``TRANSFERS_SECRET_KEY`` through the same derived key as the rating links, under its own label so the
two never sign the same text) over the booking, the channel and the address, then ``e`` (e-mail) or
``s`` (SMS), then the booking's id. The address is signed but not written in the link: a forwarded or
logged link names no e-mail address or phone number. The page finds it again among the addresses the
booking was written to (``candidates``): the one the signature matches. Changing the secret key ends
the links issued before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable

from transfers import public_urls

OPTOUT_PATH = "/m/"
SIGNATURE_LENGTH = 22  # 16 bytes, URL-safe base64 without padding
MAX_ID_DIGITS = 18
CHANNEL_LETTERS = {"email": "e", "sms": "s"}
_CHANNELS = {letter: channel for channel, letter in CHANNEL_LETTERS.items()}
_LABEL = b"transfers opt-out\x00"


def normal_address(channel: str, address: str) -> str:
    """The address as opt-outs store it: an e-mail trimmed and lowercased, a number (E.164) trimmed."""
    trimmed = address.strip()
    return trimmed.lower() if channel == "email" else trimmed


def _signature(booking_id: int, channel: str, address: str, key: bytes | None = None) -> str:
    text = f"{booking_id}\x00{channel}\x00{normal_address(channel, address)}".encode()
    digest = hmac.new(key or public_urls.link_key(), _LABEL + text, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def optout_token(booking_id: int, channel: str, address: str, key: bytes | None = None) -> str:
    """The token of the opt-out page for messages about ``booking_id`` on ``channel`` (``email`` or ``sms``:
    another is a caller's bug, a KeyError) to ``address``."""
    letter = CHANNEL_LETTERS[channel]
    return _signature(booking_id, channel, address, key) + letter + str(booking_id)


def optout_url(base: str, booking_id: int, channel: str, address: str) -> str:
    """``{base}/m/{token}``: the link a message about ``booking_id`` sent on ``channel`` to ``address``
    carries (``base`` is the service's public base URL, ``TRANSFERS_PUBLIC_BASE_URL``)."""
    return f"{base.rstrip('/')}{OPTOUT_PATH}{optout_token(booking_id, channel, address)}"


def read_token(token: str) -> tuple[int, str] | None:
    """(booking id, channel) a token names, or None when it cannot be one of ours; the signature is
    checked by ``address_of`` against the booking's addresses."""
    if not token.isascii() or not (SIGNATURE_LENGTH + 2 <= len(token) <= SIGNATURE_LENGTH + 1 + MAX_ID_DIGITS):
        return None
    signature, letter, digits = token[:SIGNATURE_LENGTH], token[SIGNATURE_LENGTH], token[SIGNATURE_LENGTH + 1 :]
    if not all(c.isalnum() or c in "-_" for c in signature) or letter not in _CHANNELS:
        return None
    if not digits.isdigit() or digits.startswith("0"):
        return None
    return int(digits), _CHANNELS[letter]


def address_of(token: str, candidates: Iterable[str], key: bytes | None = None) -> str | None:
    """The address among ``candidates`` (the booking's addresses on the token's channel) that ``token``
    was signed for, normalised, or None (compared in constant time)."""
    named = read_token(token)
    if named is None:
        return None
    booking_id, channel = named
    given = token[:SIGNATURE_LENGTH]
    for candidate in candidates:
        if candidate and hmac.compare_digest(given, _signature(booking_id, channel, candidate, key)):
            return normal_address(channel, candidate)
    return None
