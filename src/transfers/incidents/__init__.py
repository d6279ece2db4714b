"""Incidents (docs/rules/incidents.md): who pays when a ride went wrong.

``rules`` is pure (types, the 72 h window, what a report and a resolution may say); ``models`` the
typed row and its JSON; ``repository`` the SQL; ``service`` the use cases (a client's report, the
partner's customer no-show, an operator's resolution), each in one transaction with the booking's
row locked, so a refund, the booking's status and the client events commit together or not at all;
``evidence`` what the ride recorded (``ride/``), read for an incident. A package above ``bookings/``
and ``ride/``: a customer's no-show reaches it through the ride's moment (``ride/hooks.py``),
registered at start-up (``transfers/features.py``), as its refunds reach a cancel's journal entries
(``bookings/hooks.py``'s ``partner_refunds``). Its table is ``db/tables/incidents.py`` (keyed by
booking id).
"""
