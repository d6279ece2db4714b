"""Idempotency fingerprints compare meaning, not bytes (docs/rules/reliability.md#idempotency)."""

from __future__ import annotations

import hashlib
import json

import pytest

from transfers.idempotency.fingerprint import fingerprint

PATH = "/api/v1/booking-api/booking"


def same(a: tuple[str, bytes], b: tuple[str, bytes]) -> bool:
    first, second = fingerprint("POST", PATH, *a), fingerprint("POST", PATH, *b)
    return second.matches(first.canonical)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (b'{"a":1,"b":[1,2]}', b'{ "b" : [ 1 , 2 ] ,\n "a" : 1 }'),
        (b'{"name":"Zo\xc3\xab"}', b'{"name":"Zo\\u00eb"}'),
        (b'{"name":"\\/x"}', b'{"name":"/x"}'),
        (b'{"n":null,"t":true}', b'{"t":true,"n":null}'),
        (b'{"deep":{"z":{"y":1,"x":2}}}', b'{"deep":{"z":{"x":2,"y":1}}}'),
    ],
)
def test_the_same_json_in_other_bytes_is_the_same_request(a: bytes, b: bytes) -> None:
    assert same(("", a), ("", b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (b'{"a":1}', b'{"a":1.0}'),
        (b'{"a":1}', b'{"a":1e0}'),
        (b'{"a":0}', b'{"a":-0}'),
        (b'{"a":1}', b'{"a":"1"}'),
        (b'{"a":[1,2]}', b'{"a":[2,1]}'),
        (b'{"a":null}', b"{}"),
        (b'{"a":true}', b'{"a":"true"}'),
        (b'{"a":1}', b'{"a":2}'),
        (b"{not json", b"{not  json"),
        (b'{"a":NaN}', b'{"a": NaN}'),  # not JSON for the service: bytes
        (b'\xff{"a":1}', b'\xff{"a": 1}'),
        (b"", b"{}"),
    ],
)
def test_another_meaning_is_another_request(a: bytes, b: bytes) -> None:
    assert not same(("", a), ("", b))
    assert same(("", a), ("", a))


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("b=2&a=1", "a=1&b=2", True),
        ("a=%31", "a=1", True),
        ("a=x+y", "a=x%20y", True),
        ("s=A&s=B", "s=B&s=A", False),
        ("s=A&t=1&s=B", "t=1&s=A&s=B", True),
        ("a=1", "a=1&a=1", False),
        ("a=%FF", "a=%FE", False),  # not UTF-8: compared as written
        ("a=1", "", False),
    ],
)
def test_the_query_compares_by_its_parameters(a: str, b: str, equal: bool) -> None:
    assert same((a, b"{}"), (b, b"{}")) is equal


def test_method_and_path_still_count() -> None:
    body = b'{"a":1}'
    assert not fingerprint("DELETE", PATH, "", body).matches(fingerprint("POST", PATH, "", body).canonical)
    assert not fingerprint("POST", PATH + "s", "", body).matches(fingerprint("POST", PATH, "", body).canonical)


def test_a_row_stored_before_the_upgrade_matches_the_same_bytes_only() -> None:
    """The pre-issue-12 request_hash (SHA-256 over the raw parts) is still accepted."""
    body = json.dumps({"a": 1, "b": 2}).encode()
    digest = hashlib.sha256()
    for part in (b"POST", PATH.encode(), b"x=1", body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    old = digest.hexdigest()
    assert fingerprint("POST", PATH, "x=1", body).matches(old)
    assert not fingerprint("POST", PATH, "x=1", body + b" ").matches(old)
    assert fingerprint("POST", PATH, "x=1", body).canonical != old
    assert len(fingerprint("POST", PATH, "x=1", body).canonical) == 64  # fits request_hash String(64)


def test_deep_nesting_does_not_raise() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert fingerprint("POST", PATH, "", deep).matches(fingerprint("POST", PATH, "", deep).canonical)
