"""Plausible, fictional drivers and meeting points.

A booking's driver is derived from its reservation number, so the reverse-API approval and every
later ``/booking/info`` answer name the same person. Phone numbers come from Ofcom's London range
reserved for drama (+44 20 7946 0000-0999): valid to a phone-number validator, yet they never ring
anyone.
"""

from __future__ import annotations

import hashlib
import random
import string
from typing import Any

FIRST_NAMES = (
    "James",
    "Amira",
    "Tomasz",
    "Priya",
    "Daniel",
    "Sofia",
    "Kwame",
    "Chloe",
    "Mateo",
    "Hannah",
    "Oliver",
    "Leila",
    "Marco",
    "Aisha",
    "Lukas",
    "Grace",
    "Rafael",
    "Yuki",
    "Samuel",
    "Elena",
)
LAST_NAMES = (
    "Okafor",
    "Nowak",
    "Patel",
    "Rossi",
    "Hughes",
    "Fernandes",
    "Kowalski",
    "Singh",
    "Murphy",
    "Haddad",
    "Schmidt",
    "Costa",
    "Walker",
    "Ibrahim",
    "Bennett",
    "Moreau",
    "Evans",
    "Tanaka",
)
_PLATE_LETTERS = "".join(c for c in string.ascii_uppercase if c not in "IQZ")


def _rng(reservation_no: str) -> random.Random:
    return random.Random(hashlib.sha256(reservation_no.encode()).digest())


def driver_for(reservation_no: str) -> dict[str, str]:
    rng = _rng(reservation_no)
    name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    phone = f"+442079460{rng.randrange(1000):03d}"
    plate = f"{rng.choice(_PLATE_LETTERS)}{rng.choice(_PLATE_LETTERS)}{rng.randrange(10, 76):02d} " + "".join(
        rng.choice(_PLATE_LETTERS) for _ in range(3)
    )
    return {"name": name, "phone": phone, "plate": plate}


def meeting_point(origin: dict[str, Any]) -> str:
    """Where the driver waits: a name board in arrivals at an airport, the door at an address. An airport's
    meeting point names no terminal: the flight's own terminal (the flight provider's, shown beside it on the
    traveller's and the driver's pages) is the one that counts, and a fixed one would contradict it."""
    if origin.get("type") == "AIRPORT":
        if str(origin.get("iata_code", "")).upper() == "LHR":
            return "Arrivals hall of your terminal, by the Costa Coffee, holding a name board"
        where = origin.get("name") or origin.get("iata_code") or "the airport"
        return f"Arrivals hall of your terminal at {where}, by the information desk, holding a name board"
    where = origin.get("name") or "the pickup address"
    return f"At the entrance of {where}; the driver calls 10 minutes before arrival"
