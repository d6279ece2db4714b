"""What operators read when settings or the database are wrong: names, masked secrets, what to set."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from transfers.config import Settings
from transfers.ops.database import Schema, schema_problem, shown_target
from transfers.ops.masking import mask_url, scrub
from transfers.ops.settings_errors import describe_validation_error


def _lines(**values: object) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        Settings(**values)
    return describe_validation_error(caught.value)


def test_every_bad_value_is_one_line_naming_the_variable() -> None:
    lines = _lines(
        partner_timeout_seconds="abc",
        database_pool_size=0,
        log_level="loud",
        default_currency="eur",
        sandbox_partner="maybe",
    )
    assert len(lines) == 5
    assert "TRANSFERS_PARTNER_TIMEOUT_SECONDS='abc': expected a number" in lines
    assert "TRANSFERS_DATABASE_POOL_SIZE='0': expected greater than or equal to 1" in lines
    assert any(line.startswith("TRANSFERS_LOG_LEVEL='loud': expected one of DEBUG") for line in lines)
    assert any(line.startswith("TRANSFERS_DEFAULT_CURRENCY='eur'") for line in lines)
    assert "TRANSFERS_SANDBOX_PARTNER='maybe': expected 1, 0, true or false" in lines


def test_passwords_in_urls_are_masked() -> None:
    (line,) = _lines(database_url="mysql://root:s3cret@db/x")
    assert "s3cret" not in line and "mysql://root:***@db/x" in line
    (line,) = _lines(redis_url="http://:s3cret@cache:6379")
    assert "s3cret" not in line
    assert mask_url("postgresql://u:p%40ss@h:5432/d?sslmode=require") == "postgresql://u:***@h:5432/d?sslmode=require"
    assert mask_url("postgresql://u@h/d") == "postgresql://u@h/d"
    assert shown_target("postgresql+asyncpg://u:pw@h/d") == "postgresql://u:***@h/d"
    assert scrub("failed for dsn postgresql://u:hunter2@h", ["hunter2"]) == "failed for dsn postgresql://u:***@h"


def test_live_refusals_say_what_to_set() -> None:
    lifted = {"allow_private_partner_urls": True, "allow_private_webhook_urls": True}
    assert Settings(environment="sandbox", **lifted).deployment_problems() == []
    assert Settings(environment="live", secret_key="k").deployment_problems() == []
    problems = Settings(environment="live", sandbox_partner=True, **lifted).deployment_problems()
    assert [p.split(" ", 1)[0] for p in problems] == [
        "TRANSFERS_SECRET_KEY",
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS=1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS=1",
        "TRANSFERS_SANDBOX_PARTNER=1",
    ]


def test_schema_ahead_behind_and_at_head() -> None:
    url = "sqlite+aiosqlite:///x.sqlite3"
    assert schema_problem(Schema(("0005",), ("0005",), ()), url, migrates=False) is None
    behind = schema_problem(Schema(("0004",), ("0005",), ()), url, migrates=False)
    assert behind is not None and "transfers db upgrade" in str(behind)
    assert schema_problem(Schema(("0004",), ("0005",), ()), url, migrates=True) is None
    ahead = schema_problem(Schema(("0099",), ("0005",), ("0099",)), url, migrates=True)
    assert ahead is not None and ahead.exit_code == 69 and "0099" in str(ahead)
