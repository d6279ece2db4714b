"""Encryption at rest for partner secrets the service must be able to use again.

The outbound bearer token and the signing secret are needed in clear to call and sign, so they
cannot be hashed like API keys. They are encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under
the deployment's ``TRANSFERS_SECRET_KEY``. In sandbox, a key is generated once into
``var/secret.key`` so a fresh checkout works with no set-up; live refuses to start without one.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from cryptography.fernet import Fernet

from transfers.config import Settings
from transfers.db.private_files import create_private_file
from transfers.errors import Invalid

SANDBOX_KEY_FILE = Path("var") / "secret.key"


class SecretKeyMissing(Invalid, RuntimeError):
    """Live without ``TRANSFERS_SECRET_KEY``: the stored partner secrets cannot be opened."""


def resolve_secret_key(settings: Settings) -> str:
    if settings.secret_key:
        return settings.secret_key
    if not settings.is_sandbox:
        raise SecretKeyMissing("TRANSFERS_SECRET_KEY is required when TRANSFERS_ENVIRONMENT=live")
    if SANDBOX_KEY_FILE.exists():
        return SANDBOX_KEY_FILE.read_text().strip()
    key = Fernet.generate_key().decode()
    if not create_private_file(SANDBOX_KEY_FILE, key.encode()):  # another process made it meanwhile
        return SANDBOX_KEY_FILE.read_text().strip()
    return key


class SecretBox:
    def __init__(self, secret_key: str) -> None:
        # Any string works as TRANSFERS_SECRET_KEY: it is stretched to a Fernet key.
        digest = hashlib.sha256(secret_key.encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))
        self._raw = secret_key

    def seal(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def open(self, sealed: str) -> str:
        return self._fernet.decrypt(sealed.encode()).decode()

    def derive(self, purpose: str) -> bytes:
        """Deterministic bytes for ``purpose`` (the sandbox partner's credentials across processes)."""
        return hashlib.sha256(f"{purpose}:{self._raw}".encode()).digest()
