"""Run wrk with ``bench/wrk/requests.lua`` and read the one JSON line its ``done()`` prints."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).parent / "wrk" / "requests.lua"


@dataclass
class Request:
    method: str
    path: str
    key: str = ""
    body: str = ""

    def line(self) -> str:
        assert "\t" not in self.body and "\n" not in self.body
        return f"{self.method}\t{self.path}\t{self.key}\t{self.body}"


def write_requests(path: Path, requests: list[Request]) -> Path:
    path.write_text("".join(r.line() + "\n" for r in requests))
    return path


@dataclass
class WrkResult:
    raw: dict[str, Any]
    connections: int
    extra: dict[str, Any] = field(default_factory=dict)
    closed_loop: bool = False  # req/s by Little's law (connections / mean latency), see requests.lua "once"

    @property
    def seconds(self) -> float:
        return float(self.raw["duration_us"]) / 1e6

    @property
    def requests(self) -> int:
        return int(self.raw["requests"])

    @property
    def rps(self) -> float:
        if self.closed_loop:
            mean = float(self.raw["mean_us"]) / 1e6
            return self.connections / mean if mean else 0.0
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def p50_ms(self) -> float:
        return float(self.raw["p50_us"]) / 1000

    @property
    def p99_ms(self) -> float:
        return float(self.raw["p99_us"]) / 1000

    @property
    def errors(self) -> int:
        r = self.raw
        return int(r["connect_errors"] + r["read_errors"] + r["write_errors"] + r["timeouts"] + r["status_errors"])

    def summary(self) -> dict[str, Any]:
        return {
            "rps": round(self.rps, 1),
            "p50_ms": round(self.p50_ms, 2),
            "p99_ms": round(self.p99_ms, 2),
            "connections": self.connections,
            **self.raw,
            **self.extra,
        }


def wrk(
    base_url: str,
    requests_file: Path,
    *,
    mode: str = "random",
    threads: int = 2,
    connections: int = 32,
    duration: float = 8.0,
    count: bool = False,
    timeout: float = 10.0,
) -> WrkResult:
    threads = max(1, min(threads, connections))
    argv = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        f"--timeout={timeout:g}s",
        "-s",
        str(SCRIPT),
        base_url,
        "--",
        str(requests_file),
        mode,
        str(threads),
    ]
    if count:
        argv.append("count")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=duration + timeout + 60, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("BENCHJSON "):
            return WrkResult(json.loads(line[len("BENCHJSON ") :]), connections)
    raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
