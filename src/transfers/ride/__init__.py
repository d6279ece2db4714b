"""The ride (docs/rules/ride.md): driver events and positions a partner reports after a
booking is APPROVED. A package above ``bookings/``: it moves bookings through the bookings' lifecycle.

* ``service.py``: the use cases (record a driver event, record positions; any edge, any actor), each
  in one write transaction with the booking's change and its client events.
* ``rules.py``: what a report must look like and when it is accepted; every refusal names its rule.
  Pure: it decides from the booking's facts (``BookingFacts``) and the clock's time.
* ``repository.py``: the statements on ``ride_events`` and ``ride_positions`` (``db/tables/ride.py``, keyed
  by booking id).
* ``hooks.py``: the ride's moments the features above it register for at start-up (a customer's no-show:
  the incidents').

The ride's vocabulary and the ride as the booking keeps and shows it (``ride_milestones``,
``ride_position``: the resource's ``ride``) are the booking's: ``bookings/ride_field.py``.
"""
