"""Standard Webhooks signatures: the service's signer, its verifier, and the copyable example."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from transfers.partners import verify_example as example
from transfers.partners.signing import SECRET_PREFIX, new_signing_secret, sign, signature_headers, verify

BODY = b'{"reservation_no":"TB-7K3M9Q2X","status":"CANCELLED"}'
NOW = 1_800_000_000


def test_roundtrip_with_service_and_example_verifiers() -> None:
    secret = new_signing_secret()
    headers = signature_headers(secret, BODY, timestamp=NOW)
    assert re.fullmatch(r"msg_[0-9a-f]{32}", headers["webhook-id"])
    assert headers["webhook-signature"].startswith("v1,")
    assert verify(secret, headers, BODY, now=NOW)
    assert example.verify_webhook(secret, headers, BODY, now=NOW)
    upper = {k.upper(): v for k, v in headers.items()}
    assert example.verify_webhook(secret, upper, BODY, now=NOW)  # header names are case-insensitive


def test_each_secret_is_new_and_well_formed() -> None:
    secrets = {new_signing_secret() for _ in range(100)}
    assert len(secrets) == 100
    assert all(s.startswith(SECRET_PREFIX) and len(s) == len(SECRET_PREFIX) + 44 for s in secrets)


@pytest.mark.parametrize("tamper", ["body", "id", "timestamp", "signature"])
def test_tampering_fails(tamper: str) -> None:
    secret = new_signing_secret()
    headers = signature_headers(secret, BODY, timestamp=NOW)
    body = BODY
    if tamper == "body":
        body = BODY.replace(b"CANCELLED", b"APPROVED")
    elif tamper == "id":
        headers["webhook-id"] = "msg_other"
    elif tamper == "timestamp":
        headers["webhook-timestamp"] = str(NOW + 1)
    else:
        headers["webhook-signature"] = "v1," + "A" * 44
    assert not verify(secret, headers, body, now=NOW)
    assert not example.verify_webhook(secret, headers, body, now=NOW)


def test_wrong_secret_fails() -> None:
    headers = signature_headers(new_signing_secret(), BODY, timestamp=NOW)
    assert not verify(new_signing_secret(), headers, BODY, now=NOW)
    assert not example.verify_webhook(new_signing_secret(), headers, BODY, now=NOW)


@pytest.mark.parametrize(
    ("skew", "accepted"), [(0, True), (300, True), (-300, True), (301, False), (-301, False), (86_400, False)]
)
def test_timestamp_tolerance(skew: int, accepted: bool) -> None:
    secret = new_signing_secret()
    headers = signature_headers(secret, BODY, timestamp=NOW + skew)
    assert verify(secret, headers, BODY, now=NOW) is accepted
    assert example.verify_webhook(secret, headers, BODY, now=NOW) is accepted


def test_one_matching_signature_among_several_is_enough() -> None:
    old, new = new_signing_secret(), new_signing_secret()
    headers = signature_headers(new, BODY, webhook_id="msg_rotation", timestamp=NOW)
    # Secret rotation: the sender signs with both; either secret verifies.
    headers["webhook-signature"] = f"{sign(old, 'msg_rotation', NOW, BODY)} v2,ignored {headers['webhook-signature']}"
    assert verify(new, headers, BODY, now=NOW) and verify(old, headers, BODY, now=NOW)
    assert example.verify_webhook(new, headers, BODY, now=NOW) and example.verify_webhook(old, headers, BODY, now=NOW)
    only_other_versions = dict(headers, **{"webhook-signature": "v2," + sign(new, "msg_rotation", NOW, BODY)[3:]})
    assert not verify(new, only_other_versions, BODY, now=NOW)
    assert not example.verify_webhook(new, only_other_versions, BODY, now=NOW)


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_missing_or_malformed_headers_fail(missing: str) -> None:
    secret = new_signing_secret()
    headers = signature_headers(secret, BODY, timestamp=NOW)
    without = {k: v for k, v in headers.items() if k != missing}
    assert not verify(secret, without, BODY, now=NOW)
    assert not example.verify_webhook(secret, without, BODY, now=NOW)
    garbled = dict(headers, **{"webhook-timestamp": "17e8"})
    assert not verify(secret, garbled, BODY, now=NOW)
    assert not example.verify_webhook(secret, garbled, BODY, now=NOW)


def test_published_vector() -> None:
    """The Standard Webhooks reference vector: our signer, both verifiers and the docs agree on it."""
    wid = example.TEST_HEADERS["webhook-id"]
    assert sign(example.TEST_SECRET, wid, example.TEST_TIMESTAMP, example.TEST_BODY) == example.TEST_SIGNATURE
    assert (
        "v1," + example.expected_signature(example.TEST_SECRET, wid, str(example.TEST_TIMESTAMP), example.TEST_BODY)
        == example.TEST_SIGNATURE
    )
    assert verify(example.TEST_SECRET, example.TEST_HEADERS, example.TEST_BODY, now=example.TEST_TIMESTAMP)
    assert example.verify_webhook(
        example.TEST_SECRET, example.TEST_HEADERS, example.TEST_BODY, now=example.TEST_TIMESTAMP
    )
    assert not example.verify_webhook(example.TEST_SECRET, example.TEST_HEADERS, example.TEST_BODY)  # stale now
    docs = (Path(__file__).parents[2] / "docs" / "partners" / "index.md").read_text()
    module_doc = example.__doc__ or ""
    for value in (
        example.TEST_SECRET,
        wid,
        str(example.TEST_TIMESTAMP),
        example.TEST_BODY.decode(),
        example.TEST_SIGNATURE,
    ):
        assert value in docs and value in module_doc


def test_partner_docs_carry_the_example_code_verbatim() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "partners" / "index.md").read_text()
    for function in (example.expected_signature, example.verify_webhook):
        assert inspect.getsource(function) in docs, function.__name__
