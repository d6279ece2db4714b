"""Answers judged against the published contract, ``openapi/partner.yaml``.

The service's own validators (``transfers.partners.wire``) are what really decides, but a partner
builds from the published document: a check that only ran the validators could pass an answer the
document forbids (or the other way round) and the two would drift apart unnoticed. jsonschema and
PyYAML are optional here: without them the check still runs and the report carries a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

_DOC_URI = "urn:transfers:partner-openapi"


def location(parts: Sequence[int | str]) -> str:
    """A JSON path as a developer writes it: ``vehicles[0].price``; ``answer`` for the root."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "answer"


class ContractSchemas:
    """Validates answers against the 2xx response schema of one operation in partner.yaml."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self._validators: dict[tuple[str, str], Any] = {}
        try:
            import jsonschema  # type: ignore[import-untyped]
            import yaml  # type: ignore[import-untyped]
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012
        except ImportError as exc:
            self.unavailable = (
                f"answers not checked against partner.yaml ({exc.name} is not installed: "
                "pip install jsonschema pyyaml); the service's own validators still ran"
            )
            return
        text = resources.files("transfers").joinpath("openapi/partner.yaml").read_text(encoding="utf-8")
        self._doc: dict[str, Any] = dict(yaml.safe_load(text))
        self._registry: Any = Registry().with_resource(_DOC_URI, Resource.from_contents(self._doc, DRAFT202012))
        self._validator_class: Any = jsonschema.Draft202012Validator
        self._best_match: Callable[..., Any] = jsonschema.exceptions.best_match

    def component_errors(self, name: str, instance: Any) -> list[str]:
        """Every error of ``instance`` against ``#/components/schemas/<name>`` (for requests we send)."""
        if self.unavailable is not None:
            return []
        validator = self._validator_class({"$ref": f"{_DOC_URI}#/components/schemas/{name}"}, registry=self._registry)
        return [f"{location(list(e.absolute_path))}: {e.message}" for e in validator.iter_errors(instance)]

    def errors(self, method: str, path: str, instance: Any) -> list[str]:
        """At most one readable error (the most relevant one); [] when valid or unavailable."""
        if self.unavailable is not None:
            return []
        key = (method, path)
        if key not in self._validators:  # the operation's 200 application/json schema, by JSON pointer
            parts = ["paths", path, method.lower(), "responses", "200", "content", "application/json", "schema"]
            pointer = "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)
            self._validators[key] = self._validator_class({"$ref": f"{_DOC_URI}#/{pointer}"}, registry=self._registry)
        error = self._best_match(self._validators[key].iter_errors(instance))
        if error is None:
            return []
        where = location(list(error.absolute_path))
        return [f"{where}: {error.message} (partner.yaml)"]


@lru_cache(maxsize=1)
def contract_schemas() -> ContractSchemas:
    """One parsed document per process: the console runs checks repeatedly."""
    return ContractSchemas()
