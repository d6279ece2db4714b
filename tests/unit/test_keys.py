from transfers.auth.keys import bearer_token, hash_key, hashes_match, issue_key, parse_key


def test_issued_key_is_long_random_and_parses_to_its_prefix() -> None:
    issued = issue_key("tk")
    assert issued.key.startswith(issued.prefix + "_")
    assert parse_key(issued.key) == ("tk", issued.prefix)
    secret = issued.key.rsplit("_", 1)[-1] if issued.key.count("_") == 2 else issued.key[len(issued.prefix) + 1 :]
    assert len(secret) == 43  # 32 random bytes, base64url
    assert issued.key_hash == hash_key(issued.key) and issued.key not in issued.key_hash


def test_keys_do_not_repeat() -> None:
    keys = {issue_key("tk").key for _ in range(500)}
    prefixes = {k.split("_")[1] for k in keys}
    assert len(keys) == 500 and len(prefixes) == 500


def test_hash_comparison() -> None:
    issued = issue_key("pk")
    assert hashes_match(issued.key_hash, issued.key)
    assert not hashes_match(issued.key_hash, issued.key[:-1] + ("A" if issued.key[-1] != "A" else "B"))


def test_malformed_keys_do_not_parse() -> None:
    for bad in [
        "",
        "tk_",
        "tk_zzzzzzzzzzzz_" + "a" * 43,
        "xx_0123456789ab_" + "a" * 43,
        "tk_0123456789ab_short",
        "tk_0123456789ab_" + "a" * 43 + "\n",
        "tk_0123456789ab_" + "é" * 43,
    ]:
        assert parse_key(bad) is None


def test_bearer_header_parsing() -> None:
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer  abc ") == "abc"
    assert bearer_token("Basic abc") is None
    assert bearer_token("Bearer") is None
    assert bearer_token("Bearer ") is None
    assert bearer_token(None) is None
