"""MkDocs hooks: the OpenAPI documents become part of the site at build time.

Copied, not duplicated in docs/, so the site can never show an older contract than the code: the
partner API and the rate card's schema from ``src/transfers/openapi/``, and the booking API's document
as the service generates it (``create_app().openapi()``, the same JSON ``/openapi.json`` serves).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent
OPENAPI = ROOT / "src" / "transfers" / "openapi"


def booking_api_document() -> str:
    """The booking API's OpenAPI document, built by the app itself on a throwaway SQLite file."""
    from transfers.app import create_app
    from transfers.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            database_url=f"sqlite:///{tmp}/docs.sqlite3",
            secret_key="docs-build-" + "x" * 32,
            environment="sandbox",
        )
        app = create_app(settings, configure_logs=False)
        return json.dumps(app.openapi(), indent=2, sort_keys=False) + "\n"


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for source in sorted(OPENAPI.iterdir()):
        if source.suffix in {".yaml", ".json"}:
            files.append(File.generated(config, f"api/{source.name}", content=source.read_bytes()))
    files.append(File.generated(config, "api/booking-api.json", content=booking_api_document()))
    return files
