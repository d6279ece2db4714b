"""The refusal checks: a partner's server must refuse with 401 every call that is not the
service's (a bad signature, a wrong bearer token, a signature timestamp 10 minutes old). A
server that accepts them would take bookings from anyone who knows its URL, or replays of old
ones, so an accepted request is a failure even when the answer itself is perfect.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from typing import Any

from transfers.partners.client import CallResult
from transfers.partners.conformance.judging import transport_problem
from transfers.partners.conformance.session import CheckSession
from transfers.partners.conformance.signed_request import post_signed_at
from transfers.partners.signing import new_signing_secret

STALE_SECONDS = 600  # well past the 5-minute tolerance of Standard Webhooks verifiers


class AuthChecks(CheckSession):
    async def check_refusals(self, search: dict[str, Any]) -> None:
        path = "/booking/search"
        bad_secret = replace(self.endpoint, signing_secret=new_signing_secret())
        wrong_token = replace(self.endpoint, outbound_token="ot_" + secrets.token_hex(16))
        for name, endpoint, what in (
            ("refuses a bad signature", bad_secret, "a bad signature"),
            ("refuses a wrong bearer token", wrong_token, "a wrong bearer token"),
        ):
            result = await self.call("POST", path, search, self.deadlines.search, endpoint=endpoint)
            self.record(name, "POST", path, result, None, self._refusal(result, what), "401")
        # Replay protection: correctly signed, but 10 minutes ago (sent by hand: see signed_request).
        result = await post_signed_at(
            self.endpoint,
            path,
            search,
            timestamp=int(time.time()) - STALE_SECONDS,
            wait=self.deadlines.wait(self.deadlines.search),
        )
        self.record(
            "refuses a stale timestamp",
            "POST",
            path,
            result,
            None,
            self._refusal(result, "a signature timestamp 10 minutes old"),
            "401",
        )

    def _refusal(self, result: CallResult, what: str) -> list[str]:
        if result.http_status == 401:
            return []
        if result.http_status is not None and 200 <= result.http_status < 300:
            return [f"accepted a request with {what} (HTTP {result.http_status}); expected 401"]
        seen = transport_problem(result, self.deadlines.wait(self.deadlines.search)) or f"HTTP {result.http_status}"
        return [f"{seen} for a request with {what}; expected 401"]
