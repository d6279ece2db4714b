"""Processes the suite starts: each one in its own session, its PID written to a file the shell
trap in ``bench/run.sh`` reads, and stopped by that PID (SIGTERM, then SIGKILL) when done."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path


class Proc:
    def __init__(self, name: str, argv: list[str], *, env: dict[str, str], cwd: Path, log: Path, pidfile: Path) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.log = log
        self.pidfile = pidfile
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def start(self) -> Proc:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.argv, env=self.env, cwd=self.cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        with self.pidfile.open("a") as pids:
            pids.write(f"{self.popen.pid}\n")
        return self

    def wait_http(self, url: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen is not None and self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.popen.returncode}; log:\n{self.tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if answer.status < 500:
                        return
            except urllib.error.HTTPError as exc:
                if exc.code < 500:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready at {url} after {timeout:.0f} s; log:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)  # its own session: the process and its workers
                self.popen.wait(timeout)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(5)
        self._forget()

    def _forget(self) -> None:
        """Take the PID out of the trap's file once the process is gone (the PID may be reused)."""
        try:
            pids = self.pidfile.read_text().split()
        except OSError:
            return
        self.pidfile.write_text("".join(f"{p}\n" for p in pids if p != str(self.pid)))

    def api_pids(self) -> list[int]:
        """The processes that serve requests: the children when it is a supervisor, else itself."""
        children = children_of(self.pid)
        return children or [self.pid]


def _process_stats() -> Iterator[tuple[int, str, list[str]]]:
    """(pid, command name, the fields after it) of every process, from ``/proc/<pid>/stat``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        yield int(entry.name), stat[stat.find("(") + 1 : stat.rfind(")")], stat.rsplit(")", 1)[1].split()


def children_of(pid: int) -> list[int]:
    return sorted(child for child, _, fields in _process_stats() if int(fields[1]) == pid)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds() -> float:
    """CPU time used so far by every process of the local PostgreSQL server (its backends, WAL
    writer, checkpointer, ...). A backend that exits between two readings takes its time with it,
    so a difference slightly under-counts; the bench's connections are pooled and live through a run."""
    ticks = sum(int(fields[11]) + int(fields[12]) for _, name, fields in _process_stats() if name == "postgres")
    return ticks / os.sysconf("SC_CLK_TCK")
