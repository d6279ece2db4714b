"""MkDocs hooks: the OpenAPI documents become part of the site at build time, readable offline.

Copied, not duplicated in docs/, so the site can never show an older contract than the code: the
partner API and the rate card's schema from ``src/transfers/openapi/``, and the booking API's document
as the service generates it (``create_app().openapi()``, the same JSON ``/openapi.json`` serves).
Each API document also gets a page that renders it with Swagger UI, from the same package files the
service's ``/docs`` uses (``transfers.api.docs_page.SWAGGER_ASSETS``), with the document inlined in
the page: it works from a static server, and from ``site/`` opened as files, with no network.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent
OPENAPI = ROOT / "src" / "transfers" / "openapi"

RENDERED = {
    "api/booking-api.md": (
        "The booking API",
        "booking-api.json",
        "What clients call, as the service generates it (the same document as `/openapi.json`; "
        "its `webhooks` section describes the events sent to client endpoints).",
    ),
    "api/partner-api.md": (
        "The partner API",
        "partner.yaml",
        "What a partner's server implements and what it may call (the [partner guide](../partners/index.md) "
        "explains it).",
    ),
}


def booking_api_document() -> dict[str, Any]:
    """The booking API's OpenAPI document, built by the app itself on a throwaway SQLite file."""
    from transfers.app import create_app
    from transfers.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            database_url=f"sqlite:///{tmp}/docs.sqlite3",
            secret_key="docs-build-" + "x" * 32,
            environment="sandbox",
        )
        document: dict[str, Any] = create_app(settings, configure_logs=False).openapi()
        return document


def swagger_page(title: str, source: str, intro: str, document: dict[str, Any]) -> str:
    inline = json.dumps(document, separators=(",", ":")).replace("</", "<\\/")
    return f"""# {title}

{intro} The file itself: [`{source}`]({source}).

<div class="swagger-doc">
<link rel="stylesheet" href="assets/swagger-ui.css">
<div id="swagger-ui"></div>
</div>

<script src="assets/swagger-ui-bundle.js"></script>

<script>
SwaggerUIBundle({{spec: {inline}, dom_id: "#swagger-ui", validatorUrl: null, deepLinking: false}});
</script>
"""


def on_files(files: Files, config: Any, **_: Any) -> Files:
    from transfers.api.docs_page import SWAGGER_ASSETS

    documents: dict[str, dict[str, Any]] = {}
    for source in sorted(OPENAPI.iterdir()):
        if source.suffix in {".yaml", ".json"}:
            files.append(File.generated(config, f"api/{source.name}", content=source.read_bytes()))
            if source.suffix == ".yaml":
                documents[source.name] = yaml.safe_load(source.read_text(encoding="utf-8"))
    booking = booking_api_document()
    documents["booking-api.json"] = booking
    files.append(File.generated(config, "api/booking-api.json", content=json.dumps(booking, indent=2) + "\n"))
    for name in ("swagger-ui-bundle.js", "swagger-ui.css"):
        files.append(File.generated(config, f"api/assets/{name}", content=(SWAGGER_ASSETS / name).read_bytes()))
    for page, (title, source, intro) in RENDERED.items():
        files.append(File.generated(config, page, content=swagger_page(title, source, intro, documents[source])))
    return files
