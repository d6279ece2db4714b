"""The application's feature packages, registered with the bookings at start-up: each handler a
feature gives ``bookings/hooks.py`` for a moment of a booking's life is registered here, in
``register``, as the delivery kinds are in ``transfers/deliveries.py``. ``create_app`` (the API, the
embedded worker), the CLI's group (every command, ``transfers worker`` included) and the tests'
``conftest.py`` call it; calling it again registers nothing twice.

This module is the only place that knows them all: ``bookings/`` imports no feature, each feature
imports ``bookings/`` (docs/architecture/index.md#layers; adding one: docs/architecture/how-to-add.md).
"""

from __future__ import annotations

from transfers.bookings.hooks import HOOKS, Hooks
from transfers.flights import enrolment as flights
from transfers.incidents import repository as incident_repo
from transfers.incidents import service as incidents
from transfers.quality import service as quality
from transfers.ride.hooks import RIDE_HOOKS, RideHooks
from transfers.search import ranking


def register(hooks: Hooks = HOOKS, ride: RideHooks = RIDE_HOOKS) -> Hooks:
    """Every feature's handlers, in the order they run; answers ``hooks``. The ride's own moments
    (``ride/hooks.py``) are registered the same way: a feature above the ride hears of its reports."""
    # flights/: a new or amended booking's flight joins its watch (docs/rules/flights.md#watching)
    hooks.on_new_booking(flights.on_new_booking)
    hooks.on_amendment_applied(flights.on_amendment_applied)
    # incidents/: a customer's no-show opens its incident, resolved at once (docs/rules/incidents.md#customer-no-show)
    ride.on_customer_no_show(incidents.open_customer_no_show)
    # incidents/: what they refunded as the partner's, which a fee-keeping cancel's journal entries carry
    # (docs/rules/incidents.md#refund-then-cancel)
    hooks.on_partner_refunds(incident_repo.partner_refunds)
    # quality/: the latest scores the search ranks by (docs/rules/quality.md#ranking)
    ranking.register(quality.current_qualities)
    return hooks
