"""The words of the messages to travellers (docs/rules/messages.md#templates), in English: each is a
gettext message id (marked with ``N_`` so ``pybabel extract`` finds it) translated at render time from
the catalogs of ``transfers/i18n/locale``. Placeholders are named (``%(brand)s``) so a translation may
put them in its own order; a translation that loses or invents one is not used (English instead).

SMS lines are written short: every SMS template fits 3 segments in every language with the longest
values (tests/unit/test_message_texts.py). Nothing here mentions a price, a partner, the passenger's
own address or number, or anything to sell.
"""

from __future__ import annotations

from transfers.i18n.catalogs import N_

# --- SMS ----------------------------------------------------------------------------------------------
SMS_REMINDER = N_("%(brand)s: reminder of your transfer %(reservation)s on %(date)s at %(time)s (local time).")
SMS_DRIVER_CHANGED = N_("%(brand)s: new driver for your transfer %(reservation)s on %(date)s at %(time)s.")
SMS_PICKUP_MOVED = N_(
    "%(brand)s: your flight's new time moves the pickup of your transfer %(reservation)s "
    "to %(date)s at %(time)s (local time). It was %(previous)s."
)
SMS_DRIVER_ARRIVED = N_(
    "%(brand)s: your driver %(driver)s is at the pickup point (transfer %(reservation)s, %(date)s %(time)s)."
)
SMS_DRIVER_ARRIVED_UNNAMED = N_(
    "%(brand)s: your driver is at the pickup point (transfer %(reservation)s, %(date)s %(time)s)."
)
SMS_CANCELLED = N_(
    "%(brand)s: your transfer %(reservation)s on %(date)s at %(time)s (local time) is cancelled. "
    "Please contact us to arrange another one."
)
SMS_DRIVER = N_("Driver: %(driver)s.")
SMS_PLATE = N_("Plate: %(plate)s.")
SMS_TRACK = N_("Follow live: %(url)s")
SMS_HELP = N_("Help: %(phone)s")
SMS_OPTOUT = N_("No more texts: %(url)s")

# --- e-mail: subjects ---------------------------------------------------------------------------------
SUBJECT_CONFIRMED = N_("%(brand)s: your transfer %(reservation)s is confirmed")
SUBJECT_REMINDER = N_("%(brand)s: reminder of your transfer on %(date)s")
SUBJECT_DRIVER_CHANGED = N_("%(brand)s: a new driver for your transfer %(reservation)s")
SUBJECT_PICKUP_MOVED = N_("%(brand)s: new pickup time for your transfer %(reservation)s")
SUBJECT_CANCELLED = N_("%(brand)s: your transfer %(reservation)s is cancelled")
SUBJECT_FEEDBACK = N_("%(brand)s: how was your transfer?")

# --- e-mail: the opening paragraph ----------------------------------------------------------------------
INTRO_CONFIRMED = N_("Your transfer is confirmed. Here are the details.")
INTRO_REMINDER = N_("A reminder of your transfer. Here are the details.")
INTRO_DRIVER_CHANGED = N_("Your transfer has a new driver.")
INTRO_PICKUP_MOVED = N_("Your pickup time has changed to follow your flight. It was %(previous)s.")
INTRO_CANCELLED = N_("Your transfer has been cancelled. Please contact us to arrange another one.")
INTRO_FEEDBACK = N_("We hope you had a good ride. How was it? Rate it in a few seconds on this page:")
FEEDBACK_WINDOW = N_("The page stays open for 7 days after your ride.")

# --- e-mail: the details ----------------------------------------------------------------------------------
LINE_RESERVATION = N_("Reservation: %(reservation)s")
LINE_PICKUP = N_("Pickup: %(date)s at %(time)s (local time, %(airport)s)")
LINE_FROM = N_("From: %(place)s")
LINE_TO = N_("To: %(place)s")
LINE_VEHICLE = N_("Vehicle: %(vehicle)s")
LINE_DRIVER = N_("Driver: %(driver)s")
LINE_PLATE = N_("Number plate: %(plate)s")
LINE_MEETING_POINT = N_("Meeting point: %(meeting_point)s")
TRACK = N_("Follow your transfer on this page:")
HELP = N_("Questions? Call %(phone)s.")
FOOTER = N_("You receive this e-mail because %(brand)s booked this transfer for you.")
OPTOUT = N_("To receive no more messages about your transfer:")
