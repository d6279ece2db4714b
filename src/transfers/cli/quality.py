"""``transfers partners score``: the partners' scorecards (docs/rules/quality.md#computing)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import click

from transfers.cli.common import print_json, with_db
from transfers.cli.tables import render
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.quality import service
from transfers.quality.service import Result


def parse_as_of(text: str) -> datetime:
    """``--as-of``: an ISO instant with its offset (or Z), or a date (its 00:00 UTC)."""
    value = text.strip()
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(0, 0, tzinfo=UTC))
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is neither an ISO instant nor a date", param_hint="--as-of") from None
    if parsed.tzinfo is None:
        raise click.BadParameter("an instant needs its offset (2026-11-29T03:00:00Z)", param_hint="--as-of")
    return parsed.astimezone(UTC)


@click.command("score")
@click.option("--partner", "partner_id", type=int, default=None, help="one partner's scorecard only")
@click.option(
    "--as-of",
    "as_of_text",
    default=None,
    help="compute as of this ISO instant (2026-11-29T03:00:00Z) or date (its 00:00 UTC); not stored",
)
@click.option("--json", "as_json", is_flag=True, help="the scorecards as JSON, each with its per-airport split")
def score_command(partner_id: int | None, as_of_text: str | None, as_json: bool) -> None:
    """Compute the partners' scorecards over the 90 days before as_of - 12 h.

    Without --as-of: as of now, stored as today's (replacing it) in one transaction. With --as-of:
    computed and printed only, the stored history untouched."""
    as_of = parse_as_of(as_of_text) if as_of_text is not None else None

    async def work(db: Database, clock: SystemClock) -> Result:
        if as_of is not None:
            return await service.compute(db, as_of, partner_id)
        now = clock.now()
        return await service.compute_and_store(db, now, now=now, partner_id=partner_id)

    result = with_db(work)
    if partner_id is not None and not result.cards:
        click.echo(f"error: no partner {partner_id}", err=True)
        raise SystemExit(1)
    if as_json:
        print_json([dict(card, airports=result.airports.get(card["partner_id"], {})) for card in result.cards])
        return
    rows = [
        [c["partner_id"], c["score"], c["tier"], c["counts"]["requests"], c["counts"]["rides"], c["rates"]["on_time"]]
        for c in result.cards
    ]
    click.echo(render(["partner", "score", "tier", "requests", "rides", "on_time"], rows))
