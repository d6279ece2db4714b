"""The addresses of actions that only a form posts (``Create key``, ``Revoke``, ``Rotate``, ``Resend``,
a user's ``Disable``): their answer is a page shown at the action's address (a key shown once, a
refusal beside its form), so a reload of it, a bookmark or a link pasted from the address bar opens it
with GET. That is answered with the page the action belongs to (303), signed in or not (which page
then asks for a sign-in), instead of a bare "405 Method Not Allowed" without the navigation. Nothing
is done by a GET."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter
from starlette.responses import RedirectResponse, Response

router = APIRouter()


def _to(location: str) -> Response:
    return RedirectResponse(location, status_code=303)


@router.get("/developers/keys", include_in_schema=False)
@router.get("/developers/keys/{prefix}/revoke", include_in_schema=False)
@router.get("/developers/endpoints", include_in_schema=False)
async def to_developers() -> Response:
    return _to("/agency/developers")


@router.get("/developers/endpoints/{endpoint_id}/{action}", include_in_schema=False)
async def to_endpoint(endpoint_id: str, action: str) -> Response:
    return _to(f"/agency/developers/endpoints/{quote(endpoint_id, safe='')}")


@router.get("/developers/deliveries/{delivery_id}/resend", include_in_schema=False)
async def to_events(delivery_id: str) -> Response:
    return _to("/agency/developers/events")


@router.get("/users/{user_id}/status", include_in_schema=False)
async def to_users(user_id: str) -> Response:
    return _to("/agency/users")
