"""Reading and running the documented examples (docs/examples/): each is a curl command (``NAME.sh``)
beside the answer the docs show (``NAME.out``: a status line, then the JSON body).

The commands are what a reader copies, so they are parsed as a shell would split them: shell
variables (``$KEY``, ``$SEARCH_ID``, ...) are substituted first, then ``shlex`` splits the words and
the curl options used in the docs (``-X``, ``-H``, ``-d``) are read. Answers are compared after
``canonical``: ids, secrets and times differ from run to run, everything else must be equal.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
DOCUMENTED_HOST = "localhost:8000"

# Values that differ on every run: compared by presence only.
VOLATILE_KEYS = frozenset(
    {
        "search_id",
        "reservation_no",
        "other_reservation_no",  # a return trip's other leg (docs/rules/return-trips.md#legs)
        "id",
        "client_id",
        "partner_id",
        "event_id",
        "user_id",
        "key_prefix",
        "api_key",
        "secret",
        "next_cursor",
        "partner_reference",
        "created_at",
        "requested_at",
        "decided_at",
        "cancelled_at",
        "free_until",
        "valid_until",
        "next_attempt_at",
        "driver",
        "driver_info",
        "meeting_point",
        # the flight's state depends on whether the worker's flight watch ran before the answer (it checks a
        # new booking at its next pass: docs/rules/flights.md#watching); its shape is in the documented answer
        "flight",
        "tracking_url",  # the traveller's page: a fresh random token per booking (docs/rules/ride.md#tracking-page)
    }
)
VOLATILE_TEXT = [
    (re.compile(r"TB-[A-Z0-9]{4,}"), "TB-<reservation>"),
    (re.compile(r"\b(tk|pk|ot|whsec|we|evt|s)_[A-Za-z0-9_-]+"), r"\1_<id>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?"), "<time>"),
    (re.compile(r"request id [0-9a-f-]+"), "request id <id>"),
]


@dataclass(frozen=True)
class Request:
    method: str
    target: str  # path and query
    headers: dict[str, str]
    body: bytes | None


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # parsed JSON, or None for an empty body


def example_names(group: str) -> list[str]:
    return sorted(path.stem for path in (EXAMPLES / group).glob("*.sh"))


def command_text(group: str, name: str) -> str:
    return (EXAMPLES / group / f"{name}.sh").read_text(encoding="utf-8")


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """``$NAME`` as the shell expands it in the docs' commands (every one the docs use must be known)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise AssertionError(f"the example uses ${name}, which the test does not know")
        return variables[name]

    return re.sub(r"\$([A-Z_]+)", value, text)


def parse_curl(text: str, variables: Mapping[str, str]) -> Request:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    words = shlex.split(substitute("\n".join(lines).replace("\\\n", " "), variables))
    assert words[0] == "curl", words
    method, url, headers, body = None, None, {}, None
    rest = iter(words[1:])
    for word in rest:
        if word == "-s":
            continue
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, _, header_value = next(rest).partition(":")
            headers[name.strip()] = header_value.strip()
        elif word in {"-d", "--data", "--data-raw"}:
            body = next(rest).encode()
        elif word.startswith("-"):
            raise AssertionError(f"curl option {word} is not read by this test")
        else:
            assert url is None, (url, word)
            url = word
    assert url is not None and url.startswith(DOCUMENTED_HOST), url
    return Request(method or ("POST" if body is not None else "GET"), url[len(DOCUMENTED_HOST) :], headers, body)


def read_answer(group: str, name: str) -> Answer:
    status_line, _, body = (EXAMPLES / group / f"{name}.out").read_text(encoding="utf-8").partition("\n")
    status = int(status_line.split()[1])
    return Answer(status, json.loads(body) if body.strip() else None)


def write_answer(group: str, name: str, answer: Answer) -> None:
    status = HTTPStatus(answer.status)
    text = f"HTTP/1.1 {status.value} {status.phrase}\n"
    if answer.body is not None:
        text += json.dumps(answer.body, indent=2, ensure_ascii=False) + "\n"
    (EXAMPLES / group / f"{name}.out").write_text(text, encoding="utf-8")


def canonical(value: Any, volatile: frozenset[str] = VOLATILE_KEYS, key: str | None = None) -> Any:
    """The answer with what changes from run to run blanked out (keys kept, so a lost field fails)."""
    if key in volatile:
        return "<any>"
    if isinstance(value, dict):
        return {k: canonical(v, volatile, k) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(item, volatile) for item in value]
    if isinstance(value, str):
        for pattern, replacement in VOLATILE_TEXT:
            value = pattern.sub(replacement, value)
    return value
