"""``transfers partners rate-card ...``: a hosted partner's rate card (docs/rules/hosted-partners.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from transfers.cli.common import actor, fail, print_json, with_db
from transfers.hosted import service
from transfers.ratecards import card as cards

MAX_CARD_BYTES = 1_000_000


def _read_card(path: str) -> Any:
    file = Path(path)
    try:
        if file.stat().st_size > MAX_CARD_BYTES:
            fail(f"{path}: larger than {MAX_CARD_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot be read ({exc})")
        raise  # not reached: fail() exits
    try:
        return json.loads(text, parse_constant=lambda name: fail(f"{path}: {name} is not JSON"))
    except json.JSONDecodeError as exc:
        fail(f"{path}: not JSON: {exc}")
        raise  # not reached


@click.group("rate-card")
def rate_card_group() -> None:
    """A hosted partner's rate card: vehicles, prices, extras, lead time, blackout dates, capacity."""


@rate_card_group.command("set")
@click.argument("partner_id", type=int)
@click.option("--file", "path", required=True, help="the card as JSON (examples/rate-card.json shows every field)")
def rate_card_set(partner_id: int, path: str) -> None:
    """Validate the card against openapi/rate-card.schema.json and make it the partner's card
    (searches use it within TRANSFERS_PARTNER_CACHE_SECONDS). Every problem is printed as
    ``error: $.path: reason``, and then nothing is stored (exit 1)."""
    document = _read_card(path)
    try:
        parsed = with_db(lambda db, clock: service.set_rate_card(db, clock, partner_id, document, actor=actor()))
    except cards.InvalidRateCard as exc:
        for error in exc.errors:
            click.echo(f"error: {error}", err=True)
        raise SystemExit(1) from None
    print_json(
        {
            "partner_id": partner_id,
            "currency": parsed.currency,
            "vehicles": [v.id for v in parsed.vehicles],
            "extras": [e.id for e in parsed.extras],
        }
    )


@rate_card_group.command("get")
@click.argument("partner_id", type=int)
def rate_card_get(partner_id: int) -> None:
    """Print the partner's card as it was set (exit 1 when it has none yet)."""
    card = with_db(lambda db, _clock: service.get_rate_card(db, partner_id))
    if card is None:
        fail(f"partner {partner_id} has no rate card yet (transfers partners rate-card set {partner_id} --file ...)")
    print_json(card)


@click.group("users")
def users_group() -> None:
    """Partner users: who signs in to the partner portal (/partner/)."""


@users_group.command("create")
@click.option("--partner", "partner_id", type=int, required=True, help="the partner's id")
@click.option("--email", required=True)
@click.option("--password-stdin", is_flag=True, help="read the password from stdin instead of generating one")
def users_create(partner_id: int, email: str, password_stdin: bool) -> None:
    """Create a portal account; prints its password once (a generated one unless --password-stdin)."""
    from transfers.hosted import users

    password = sys.stdin.readline().rstrip("\r\n") if password_stdin else None
    made = with_db(
        lambda db, clock: users.create_partner_user(
            db, clock, partner_id=partner_id, email=email, password=password, actor=actor()
        )
    )
    print_json({"user_id": made.user_id, "partner_id": made.partner_id, "email": made.email, "password": made.password})
