"""The ride (issue 22, docs/rules/ride.md): driver events and positions a partner reports after a
booking is APPROVED.

* ``model.py``: the vocabulary (event types, stages) and the ride as one frozen value, read from the
  booking's stored columns; ``view`` gives the BookingResource's ``ride``. Pure.
* ``rules.py``: what a report must look like and when it is accepted; every refusal names its rule.
  Pure: it decides from the booking's facts (``BookingFacts``) and the clock's time.
* ``repository.py``: the statements on ``ride_events`` and ``ride_positions``.

The use cases that write a report (one transaction each, with the booking's change and its client
events) are ``bookings/riding.py``: they move bookings, which is ``bookings/``'s to do.
"""
