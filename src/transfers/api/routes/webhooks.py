"""/api/v1/booking-api/webhook-endpoints (docs/rules/webhooks.md): the client's webhook endpoints.

Thin: parse, call ``webhooks/endpoints.py``, render. Another client's endpoint answers 404
``NOT_FOUND`` exactly like a missing one.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from starlette.responses import Response

from transfers import paging
from transfers.api import client_schemas as cs
from transfers.api import schemas
from transfers.api.deps import current_client, json_object, services
from transfers.api.openapi import register_body, register_query_types
from transfers.api.responses import SHOWN_ONCE, JSONBody
from transfers.client_events import events
from transfers.clients.models import ClientPrincipal
from transfers.errors import ErrorCode
from transfers.webhooks import endpoints

router = APIRouter(prefix="/api/v1/booking-api/webhook-endpoints", tags=["Webhooks"])
register_body("create_webhook_endpoint", cs.WebhookEndpointIn)
register_body("update_webhook_endpoint", cs.WebhookEndpointPatch)
register_query_types(
    "list_webhook_deliveries",
    {
        "limit": {"type": "integer", "minimum": 1, "maximum": paging.MAX_LIMIT, "default": paging.DEFAULT_LIMIT},
        "cursor": {"type": "string", "maxLength": paging.MAX_CURSOR_CHARS},
    },
)

# The endpoint id is read from the path by hand (``_endpoint_id``) and documented here: a declared
# path parameter would make FastAPI publish a 422 of its own shape that this API never answers.
_ID = {
    "parameters": [
        {
            "name": "endpoint_id",
            "in": "path",
            "required": True,
            "description": "the endpoint's id (`we_...`)",
            "schema": {"type": "string"},
        }
    ]
}


def _endpoint_id(request: Request) -> str:
    return str(request.path_params["endpoint_id"])


_WRITE_ERRORS = {
    **schemas.AUTH_ERRORS,
    **schemas.service_errors(
        ErrorCode.MALFORMED_JSON,
        ErrorCode.NOT_FOUND,
        ErrorCode.WEBHOOK_ENDPOINT_LIMIT,
        ErrorCode.INVALID_WEBHOOK_URL,
        ErrorCode.INVALID_WEBHOOK_EVENT,
        ErrorCode.INVALID_WEBHOOK_ENDPOINT,
    ),
}
_READ_ERRORS = {**schemas.AUTH_ERRORS, **schemas.service_errors(ErrorCode.NOT_FOUND)}
_LOG_ERRORS = {
    **schemas.AUTH_ERRORS,
    **schemas.service_errors(ErrorCode.NOT_FOUND, ErrorCode.INVALID_FILTER, ErrorCode.INVALID_CURSOR),
}


@router.post(
    "",
    status_code=201,
    summary="Add a webhook endpoint (its secret is shown only here)",
    response_model=cs.WebhookEndpointCreated,
    responses=_WRITE_ERRORS,
    operation_id="create_webhook_endpoint",
)
async def create_endpoint(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    body = await json_object(request)
    return JSONBody(await endpoints.create(services(request), client, body), status_code=201, headers=SHOWN_ONCE)


@router.get(
    "",
    summary="Your webhook endpoints",
    response_model=cs.WebhookEndpointList,
    responses=schemas.AUTH_ERRORS,
    operation_id="list_webhook_endpoints",
)
async def list_endpoints(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    return JSONBody(await endpoints.list_all(services(request), client))


@router.get(
    "/{endpoint_id}",
    summary="One webhook endpoint",
    response_model=cs.WebhookEndpoint,
    responses=_READ_ERRORS,
    operation_id="get_webhook_endpoint",
    openapi_extra=_ID,
)
async def get_endpoint(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    return JSONBody(await endpoints.get(services(request), client, _endpoint_id(request)))


@router.patch(
    "/{endpoint_id}",
    summary="Change url, events, description or status",
    response_model=cs.WebhookEndpoint,
    responses=_WRITE_ERRORS,
    operation_id="update_webhook_endpoint",
    openapi_extra=_ID,
)
async def update_endpoint(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    body = await json_object(request)
    return JSONBody(await endpoints.patch(services(request), client, _endpoint_id(request), body))


@router.delete(
    "/{endpoint_id}",
    status_code=204,
    summary="Delete a webhook endpoint (its pending deliveries stop)",
    responses=_READ_ERRORS,
    operation_id="delete_webhook_endpoint",
    openapi_extra=_ID,
)
async def delete_endpoint(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    await endpoints.delete(services(request), client, _endpoint_id(request))
    return Response(status_code=204)


@router.post(
    "/{endpoint_id}/test",
    status_code=202,
    summary="Send a ping event to this endpoint now",
    response_model=cs.WebhookPing,
    responses=_READ_ERRORS,
    operation_id="ping_webhook_endpoint",
    openapi_extra=_ID,
)
async def ping_endpoint(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    return JSONBody(await endpoints.ping(services(request), client, _endpoint_id(request)), status_code=202)


@router.post(
    "/{endpoint_id}/rotate-secret",
    summary="A new signing secret (the old one signs too for 24 h)",
    response_model=cs.WebhookSecret,
    responses=_READ_ERRORS,
    operation_id="rotate_webhook_secret",
    openapi_extra=_ID,
)
async def rotate_secret(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    return JSONBody(await endpoints.rotate_secret(services(request), client, _endpoint_id(request)), headers=SHOWN_ONCE)


@router.get(
    "/{endpoint_id}/deliveries",
    summary="The endpoint's delivery log, newest first",
    response_model=cs.WebhookDeliveryPage,
    responses=_LOG_ERRORS,
    operation_id="list_webhook_deliveries",
    openapi_extra=_ID,
)
async def list_deliveries(
    request: Request,
    limit: str | None = Query(default=None, description="page size, 1 to 100 (default 20)"),
    cursor: str | None = Query(default=None, description="`next_cursor` of the previous page"),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    return JSONBody(
        await endpoints.deliveries(services(request), client, _endpoint_id(request), limit=limit, cursor=cursor)
    )


def document_events(app: FastAPI) -> None:
    """The events the service POSTs to client endpoints, in the OpenAPI document's ``webhooks``
    (OpenAPI 3.1): one entry per event type, each with the signed body (docs/integrators/webhooks.md)."""
    for event_type in events.EventType:

        async def receive(body: cs.WebhookEvent) -> None:  # documentation only: never routed
            """Answer any 2xx within 5 s (delivered); 410 disables the endpoint; anything else is
            retried (about 10 s, 30 s, 2 min, 10 min, 30 min, then hourly, for 24 h). Headers:
            ``webhook-id`` (the event id, the same on every retry), ``webhook-timestamp``,
            ``webhook-signature`` (``v1,<base64 HMAC-SHA256>``, two of them for 24 h after a rotation)."""

        app.webhooks.post(
            event_type.value,
            summary=f"{event_type.value} event",
            status_code=200,
            operation_id=f"webhook_{event_type.value.replace('.', '_')}",
            tags=["Webhooks"],
        )(receive)
