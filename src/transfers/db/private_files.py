"""Files the service makes for itself are its own: the SQLite database (SQLite gives its WAL, shared
memory and journal files the database file's mode), the sandbox's ``var/secret.key`` and ``var/``
itself. Created readable and writable by their owner only (files 0600, folders 0700), whatever the
process's umask, so another account on the machine cannot read bookings, sessions or the key
(docs/operations/security.md#files).

Only what is created here is set: an existing folder (``/tmp``, a volume's root) or a database file an
operator made keeps its mode (docs/operations/security.md#files says how to tighten one made before)."""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def make_private_folder(path: Path) -> None:
    """``path`` and any missing parent, each created 0700 (existing ones are left as they are)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=FOLDER_MODE, exist_ok=True)
        folder.chmod(FOLDER_MODE)  # mkdir's mode passes through the umask


def create_private_file(path: Path, content: bytes = b"") -> bool:
    """Create ``path`` with ``content``, 0600 from its first byte (never a moment readable by others);
    False, and nothing written, when it exists already."""
    make_private_folder(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, FILE_MODE)  # open's mode passes through the umask too
        if content:
            os.write(fd, content)
    finally:
        os.close(fd)
    return True
