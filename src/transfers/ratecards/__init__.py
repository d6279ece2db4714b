"""Hosted partners' rate cards (docs/rules/hosted-partners.md): the card's schema check and
parsed form (card.py), what it offers at which net price (pricing.py, pure), and the SQL of the
stored cards and the daily capacity counters (repository.py).

A package of its own, below ``partners``, ``search`` and ``bookings``, because those three use it
(the directory keeps the parsed cards, the search prices hosted partners in-process, a booking
claims its seat) while the hosted partners' use cases (``hosted/``) sit above them all. It imports
only the cancellation policies, the reference data and the tables.
"""
