"""Running the installed ``transfers`` command as an operator would, and what its failures must look like."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from tests.process.conftest import SECRET_KEY, TRANSFERS_BIN

MAX_ERROR_LINES = 3


@dataclass
class Ran:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]

    def show(self) -> str:
        return (
            f"transfers {' '.join(self.args)} -> {self.returncode}\n--- stdout\n{self.stdout[-3000:]}\n"
            f"--- stderr\n{self.stderr[-3000:]}"
        )


def operator_env(database_url: str, **settings: str) -> dict[str, str]:
    """The caller's environment minus any TRANSFERS_*, plus a sandbox deployment on ``database_url``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "TRANSFERS_DATABASE_URL": database_url,
            "TRANSFERS_SECRET_KEY": SECRET_KEY,
            "TRANSFERS_ENVIRONMENT": "sandbox",
            # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
            "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
            "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
            "TRANSFERS_SANDBOX_PARTNER": "0",
            "TRANSFERS_LOG_LEVEL": "INFO",
        }
    )
    env.update({f"TRANSFERS_{k.upper()}": v for k, v in settings.items()})
    return env


async def transfers(*args: str, env: dict[str, str], cwd: Path, timeout: float = 90.0) -> Ran:
    """Run ``transfers ARGS`` to its end without blocking the event loop (test partners live on it)."""
    proc = await asyncio.create_subprocess_exec(
        str(TRANSFERS_BIN),
        *args,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return Ran(list(args), proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


def assert_operator_error(ran: Ran, code: int, *named: str, hidden: tuple[str, ...] = ()) -> str:
    """Exit ``code``, 1..3 lines on stderr naming everything in ``named``, no traceback anywhere, and
    none of ``hidden`` (passwords) printed on either stream. Returns stderr."""
    assert ran.returncode == code, ran.show()
    assert 1 <= len(ran.error_lines) <= MAX_ERROR_LINES, ran.show()
    assert all(line.startswith("error: ") for line in ran.error_lines), ran.show()
    assert "Traceback" not in ran.stderr and "Traceback" not in ran.stdout, ran.show()
    for text in named:
        assert text in ran.stderr, (text, ran.show())
    for secret in hidden:
        assert secret not in ran.stderr and secret not in ran.stdout, (secret, ran.show())
    return ran.stderr
