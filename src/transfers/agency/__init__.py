"""The agency portal (docs/rules/agency-portal.md), at ``/agency/``: a travel agency's people sign
in, book, follow and fix their bookings, read their wallet and, as admins, manage their users and
their integration (``Developers``).

Built on the pieces the console and the partner portal share, not a copy of them: ``webauth``
(sessions, CSRF, the sign-in throttle, security headers, the layout) in its own realm ``agency``
with its own cookie (``transfers_agency``, path ``/agency``), so no other area's session opens it;
the console's stylesheet. Every action calls the API's own use cases with the agency's
``ClientPrincipal`` (same codes, same idempotency, same audit rows), the agency user as the actor.

Layout: ``app.py`` (the sub-app and its list of sections), ``auth.py`` (who is signed in:
``Signed``, ``AdminOnly``), ``users.py`` / ``repository.py`` (agency users), ``render.py`` (the
navigation and ``page()``), ``wording.py``, ``trip_form.py`` (what ``Book``'s forms send to the
API's search and create: the direction, the way back, the extras), ``routes/`` (one module per
section; ``Book`` is ``book.py``, its search, and ``book_passenger.py``, the booking; ``post_only.py``
leads a GET of a form's action back to its page), ``templates/``, ``static/``.

Adding a section (how ``Developers`` plugs in):

1. a module ``routes/<section>.py`` with ``router = APIRouter()``; its routes take ``viewer: Signed``
   (any agency user) or ``viewer: AdminOnly`` (admins; an agent gets the 403 page), paths relative
   to ``/agency`` (``@router.get("/developers")``);
2. render with ``render.page(request, "<section>/....html", {"active": "<nav label>", ...},
   viewer=viewer, title=...)``; templates in ``templates/`` extend ``base.html`` (the layout with the
   navigation), forms carry ``<input type="hidden" name="csrf_token" value="{{ csrf_token }}">`` and
   are read with ``await viewer.form(request)`` (a missing or wrong token is the 403 page);
   ``_fields.html`` has the GOV.UK-style ``field`` and ``error_summary`` macros;
3. append ``<section>.router`` to ``ROUTERS`` in ``app.py``;
4. its link is a ``NavItem`` in ``render.NAVIGATION`` (``admin_only=True`` hides it from agents);
   ``Developers`` is listed there already;
5. read and change only ``viewer.client_id``'s rows: another agency's thing raises
   ``auth.PageNotFound`` (the 404 page), as one that does not exist; domain errors raised by use
   cases become pages through ``webauth.site.error_page_for``.
"""
