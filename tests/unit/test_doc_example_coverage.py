"""Every operation of the booking API, the reverse API and the public reference data has a documented
example (docs/examples/), which tests/e2e/test_doc_examples.py sends to the service. A new route
without one fails here, at once, rather than leaving integrators to find its fields one 422 at a time.

To add one: a curl command ``docs/examples/<group>/NN-name.sh``, its place in the reader's order in
``tests/e2e/test_doc_examples.py``, its section in docs/integrators/examples.md, then
``TRANSFERS_UPDATE_EXAMPLES=1 .venv/bin/pytest tests/e2e/test_doc_examples.py`` writes its ``.out``."""

from __future__ import annotations

import re

from tests.e2e.doc_examples import EXAMPLES, parse_curl
from transfers.app import create_app
from transfers.config import Settings


class _AnyVariable(dict[str, str]):
    """Every shell variable, as a placeholder that keeps paths matchable."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return f"{key.lower()}-1"


def test_every_api_operation_has_an_example() -> None:
    app = create_app(Settings(secret_key="x" * 40), configure_logs=False)
    # The operations the served OpenAPI document describes (every route of the APIs is in it).
    operations = {
        (method.upper(), path)
        for path, item in app.openapi()["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"} and path.startswith(("/api/v1/", "/api/public/"))
    }
    assert len(operations) > 20, operations
    sent = set()
    for sh in EXAMPLES.glob("*/*.sh"):
        request = parse_curl(sh.read_text(encoding="utf-8"), _AnyVariable())
        path = request.target.split("?")[0]
        for method, template in operations:
            if method == request.method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
                sent.add((method, template))
    missing = sorted(operations - sent)
    assert not missing, f"no example under docs/examples/ sends {missing} (this module's docstring says how to add one)"
