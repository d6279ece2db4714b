"""Settings that cannot be used, reported all at once before anything starts (exit code 2).

pydantic-settings raises one ``ValidationError`` listing every field it could not use; each becomes
one line: the variable, the value as given (masked when it is a secret), what is expected.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from transfers.config import ENV_PREFIX, SECRET_FIELDS, Settings, get_settings
from transfers.ops.errors import SettingsInvalid
from transfers.ops.masking import MASK, mask_url

_EXPECTED_BY_TYPE = {
    "bool_parsing": "expected 1, 0, true or false",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_parsing": "expected a number",
    "decimal_parsing": "expected a decimal number",
}
_URL_FIELDS = frozenset({"database_url", "redis_url", "public_base_url", "smtp_url", "sms_provider_url"})
_MAX_VALUE = 80


def load_settings(*, deployment: bool = True) -> Settings:
    """The settings, or ``SettingsInvalid`` with one line per problem. ``deployment``: also refuse
    what a live deployment must not run with (``Settings.deployment_problems``)."""
    try:
        cfg = get_settings()
    except ValidationError as exc:
        raise SettingsInvalid(*describe_validation_error(exc)) from None
    if deployment and (problems := cfg.deployment_problems()):
        raise SettingsInvalid(*problems)
    return cfg


def describe_validation_error(exc: ValidationError) -> list[str]:
    lines: list[str] = []
    seen: set[str] = set()
    for error in exc.errors(include_url=False):
        field = str(error["loc"][0]) if error.get("loc") else "?"
        if field in seen:  # a union (bool | None) reports each member; the first says enough
            continue
        seen.add(field)
        variable = ENV_PREFIX + field.upper()
        lines.append(f"{variable}={_shown(field, error.get('input'))}: {_expected(error)}")
    return lines


def _shown(field: str, value: Any) -> str:
    if field in SECRET_FIELDS:
        return MASK
    text = str(value) if value is not None else ""
    if field in _URL_FIELDS:
        text = mask_url(text)
    if len(text) > _MAX_VALUE:
        text = text[: _MAX_VALUE - 1] + "…"
    return repr(text)


def _expected(error: Any) -> str:
    message = str(error.get("msg", "invalid"))
    if error.get("type") in _EXPECTED_BY_TYPE:
        return _EXPECTED_BY_TYPE[str(error["type"])]
    if error.get("type") == "value_error":
        return message.removeprefix("Value error, ")
    for prefix in ("Input should be ", "String should "):
        if message.startswith(prefix):
            return "expected " + message.removeprefix(prefix)
    return message
