"""The partner portal (docs/rules/hosted-partners.md), at ``/partner/``: a partner's staff sign in, see their
bookings (``New``, ``Upcoming``, ``Past``), accept them with a driver, decline or cancel them, and
keep their rate card; server partners see their bookings read-only, their health and rotate their
signing secret.

Built on the operator console's pieces, not a copy of them: ``webauth`` (sessions, CSRF, the
sign-in throttle, security headers) in its own realm ``partner`` with its own cookie
(``transfers_partner``, path ``/partner``), so an operator's session never opens the portal and a
partner user's never opens the console; the console's stylesheet and template filters. Every
booking action is a use case of ``bookings/reverse.py`` (the reverse API's), audited with the
partner user.

Layout: ``app.py`` (the sub-app, error pages), ``auth.py`` (who is signed in), ``render.py``,
``routes/`` (``login``, ``bookings``, ``rate_card``, ``account``), ``templates/``, ``static/``.
"""
