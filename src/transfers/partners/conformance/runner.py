"""``ConformanceRun``: the groups of checks (search, booking, updates, refusals) combined into one
run, and the order they run in. The order is the story of one booking: each check uses what the
one before produced (the searched vehicle, the created booking), and a check whose input is
missing is recorded as SKIP with the reason rather than left out, so the table always has the
same rows.
"""

from __future__ import annotations

from transfers.partners.conformance.auth import AuthChecks
from transfers.partners.conformance.booking import BookingChecks
from transfers.partners.conformance.results import Check
from transfers.partners.conformance.search import SearchChecks
from transfers.partners.conformance.updates import UpdateChecks


class ConformanceRun(SearchChecks, BookingChecks, UpdateChecks, AuthChecks):
    async def run(self) -> list[Check]:
        search = self.search_payload()
        vehicle = await self.check_search(search)
        booking = await self.check_create(vehicle, search)
        way_back = await self.check_return_leg(booking)
        await self.check_info(booking)
        await self.check_amend(booking)
        await self.check_flight_notice(booking)
        await self.check_update(booking)
        await self.check_update(way_back, names=("update CANCELLED, way back",), missing="no way back was created")
        await self.check_refusals(search)
        return self.checks
