"""A ``TRANSFERS_*`` variable no setting reads is named, with the closest known one."""

from __future__ import annotations

from pathlib import Path

from transfers.config import known_variables, unknown_variables


def test_a_misspelled_setting_names_the_closest_known_one() -> None:
    lines = unknown_variables({"TRANSFERS_DATABSE_URL": "postgresql://x/y", "PATH": "/bin"}, env_file=None)
    assert lines == [
        "TRANSFERS_DATABSE_URL is not a setting of this release and is ignored; did you mean TRANSFERS_DATABASE_URL?"
    ]


def test_names_are_compared_in_capitals_and_far_ones_get_the_settings_page() -> None:
    lines = unknown_variables({"transfers_log_levl": "DEBUG", "TRANSFERS_ZZZ": "1"}, env_file=None)
    assert lines[0].startswith("TRANSFERS_LOG_LEVL ") and lines[0].endswith("did you mean TRANSFERS_LOG_LEVEL?")
    assert lines[1].startswith("TRANSFERS_ZZZ ") and "see docs/operations/settings.md" in lines[1]


def test_every_setting_and_the_known_extras_pass() -> None:
    environ = {name: "1" for name in known_variables()}
    assert "TRANSFERS_DEFAULT_MARKUP_PERCENT" in environ and "TRANSFERS_FAILPOINTS" in environ
    assert unknown_variables(environ, env_file=None) == []


def test_the_env_file_is_read_too(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("TRANSFERS_SECRET_KY=abc\nTRANSFERS_ENVIRONMENT=sandbox\n")
    lines = unknown_variables({}, env_file=str(env_file))
    assert len(lines) == 1 and lines[0].endswith("did you mean TRANSFERS_SECRET_KEY?")
