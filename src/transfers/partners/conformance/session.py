"""The state and plumbing every group of checks shares: the partner, the airport, the deadlines,
the checks recorded so far, and the three verbs each check is made of: ``call`` the partner as
the service does, ``judge`` the answer, ``record`` (or ``skip``) the verdict.

The search, booking and auth checks are mixins over this one base (``ConformanceRun`` combines
them), so each group sits in its own module while a run stays one object with one list of checks,
and ``transfers doctor`` can still run a single check (``check_search``) on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from transfers.partners.client import CallResult, PartnerClient, PartnerEndpoint
from transfers.partners.conformance.contract import ContractSchemas
from transfers.partners.conformance.judging import clip, late, ms, said, transport_problem, wire_errors
from transfers.partners.conformance.results import Check, Deadlines
from transfers.partners.wire import WireResult
from transfers.reference.airports import Airport


class CheckSession:
    def __init__(
        self,
        client: PartnerClient,
        endpoint: PartnerEndpoint,
        airport: Airport,
        deadlines: Deadlines,
        schemas: ContractSchemas,
        *,
        now: datetime | None = None,
    ) -> None:
        self.client = client
        self.endpoint = endpoint
        self.airport = airport
        self.deadlines = deadlines
        self.schemas = schemas
        self.now = now
        self.checks: list[Check] = []
        self.reservation_no: str | None = None

    async def call(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None,
        deadline: float,
        *,
        webhook_id: str | None = None,
        endpoint: PartnerEndpoint | None = None,
    ) -> CallResult:
        """Through the service's own ``PartnerClient`` (same bytes, headers and signature), but not
        counted in the partner's health (``observe=False``): a check is not live traffic."""
        return await self.client.call(
            endpoint or self.endpoint,
            method,
            path,
            payload,
            timeout=self.deadlines.wait(deadline),
            webhook_id=webhook_id,
            observe=False,
        )

    def record(
        self,
        name: str,
        method: str,
        path: str,
        result: CallResult | None,
        deadline: float | None,
        problems: list[str],
        note: str | None = None,
    ) -> Check:
        check = Check(
            name=name,
            method=method,
            path=path,
            result="FAIL" if problems else "PASS",
            duration_ms=result.duration_ms if result is not None else None,
            deadline_ms=ms(deadline) if deadline is not None else None,
            http_status=result.http_status if result is not None else None,
            reason=clip("; ".join(problems)) if problems else None,
            note=note,
        )
        self.checks.append(check)
        return check

    def skip(self, name: str, method: str, path: str, reason: str) -> None:
        self.checks.append(Check(name=name, method=method, path=path, result="SKIP", reason=reason))

    def judge(
        self,
        result: CallResult,
        deadline: float,
        model: type[BaseModel],
        method: str,
        path: str,
        extra: Callable[[Any], list[str]] | None = None,
    ) -> list[str]:
        """Everything wrong with one answer: transport, lateness, then the service's validator, then
        ``extra`` rules, then the OpenAPI schema (only when the rest found nothing, to avoid echoes)."""
        problem = transport_problem(result, self.deadlines.wait(deadline))
        if problem is not None:
            return [problem]
        problems = [p for p in [late(result, deadline)] if p]
        body = result.body
        if isinstance(body, dict) and body.get("status") == "Error" and model is not WireResult:
            return [*problems, f'answered {{"status":"Error"}}{said(body)}']
        found = wire_errors(model, body)
        if not found and extra is not None:
            found = extra(body)
        if not found:
            found = self.schemas.errors(method, path, body)
        return problems + found
