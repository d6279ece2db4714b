"""``/agency/``: an agency's home is its bookings (what a support desk opens first)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import RedirectResponse, Response

from transfers.agency.auth import Signed

router = APIRouter()


@router.get("/")
async def home(viewer: Signed) -> Response:
    return RedirectResponse("/agency/bookings", status_code=303)
