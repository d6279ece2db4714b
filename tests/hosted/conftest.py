"""Hosted partners for tests: registered through the CLI's use cases, with a rate card, disabled
again after each test (so later searches at that airport do not see them). The ``make_hosted``
fixture is declared in ``tests/conftest.py`` (the browser tests use it too)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.hosted import service as hosted_service
from transfers.partners import repository as partners_repo
from transfers.partners.secrets_box import SecretBox, resolve_secret_key

EXAMPLE: dict[str, Any] = json.loads((Path(__file__).parents[2] / "examples" / "rate-card.json").read_text())


def example_card(**changes: Any) -> dict[str, Any]:
    card = copy.deepcopy(EXAMPLE)
    card.update(changes)
    return card


class HostedFactory:
    def __init__(self, db: Database, clock: ShiftedClock, settings: Settings) -> None:
        self.db, self.clock = db, clock
        self.box = SecretBox(resolve_secret_key(settings))
        self.partner_ids: list[int] = []

    async def __call__(
        self,
        *,
        airports: tuple[str, ...],
        card: dict[str, Any] | None = None,
        markup: str = "0",
        name: str = "Hosted Cars Ltd",
    ) -> int:
        made = await hosted_service.register_hosted_partner(
            self.db, self.clock, self.box, name=name, airports=airports, markup_percent=Decimal(markup), actor="tests"
        )
        self.partner_ids.append(made.partner_id)
        await hosted_service.set_rate_card(self.db, self.clock, made.partner_id, card or example_card(), actor="tests")
        return made.partner_id

    async def close(self) -> None:
        async with self.db.write() as conn:
            for partner_id in self.partner_ids:
                await partners_repo.set_status(conn, partner_id, "disabled")
