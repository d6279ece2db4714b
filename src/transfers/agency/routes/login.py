"""Sign in (``/agency/login``: ``Email``, ``Password``, ``Sign in``, as the console's) and sign out:
``webauth.login_routes`` in the ``agency`` realm (its own failure throttle and cookie)."""

from __future__ import annotations

from transfers.agency import users
from transfers.agency.auth import signed_in
from transfers.agency.render import page
from transfers.webauth.login_routes import login_router

router = login_router(credentials=users.credentials, page=page, signed_in=signed_in)
