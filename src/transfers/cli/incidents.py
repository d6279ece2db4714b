"""``transfers incidents ...``: the operators' incident queue and its resolution (docs/rules/incidents.md#resolve)."""

from __future__ import annotations

from decimal import Decimal

import click

from transfers import money
from transfers.cli.common import actor, print_json, with_db
from transfers.cli.tables import render
from transfers.incidents import service
from transfers.incidents.models import Incident

LIST_COLUMNS = ["id", "reservation_no", "type", "status", "reported_by", "created", "responsible", "refund"]


@click.group("incidents")
def incidents_group() -> None:
    """Incidents: what went wrong on rides, and who pays for it."""


@incidents_group.command("list")
@click.option("--open", "open_only", is_flag=True, help="only the OPEN ones, oldest first (the queue)")
@click.option("--json", "as_json", is_flag=True, help="one JSON array of incidents, as the API shows them")
def incidents_list(open_only: bool, as_json: bool) -> None:
    """Incidents, newest first (at most 500); times are UTC."""
    found: list[Incident] = with_db(lambda db, _clock: service.listing(db, open_only=open_only))
    if as_json:
        print_json([incident.resource() for incident in found])
        return
    rows = [
        [
            i.public_id,
            i.reservation_no,
            i.type,
            i.status,
            i.reported_by,
            i.created_at,
            i.responsible,
            None if i.refund is None else money.text(i.refund, i.currency),
        ]
        for i in found
    ]
    click.echo(render(LIST_COLUMNS, rows, max_width={}, right={"refund"}))


@incidents_group.command("resolve")
@click.argument("incident_id")
@click.option("--responsible", required=True, type=click.Choice(["partner", "client", "none"]))
@click.option("--refund", required=True, help="refunded to the client, 0 up to what is still unrefunded (12.50)")
@click.option("--note", required=True, help="what the client and the partner read")
def incidents_resolve(incident_id: str, responsible: str, refund: str, note: str) -> None:
    """Resolve an OPEN incident: responsible, refund (a refund of the whole price moves the booking to
    REFUNDED) and note. Written to admin_audit. Prints the incident as JSON."""
    who = actor()
    amount: str | Decimal = refund
    resolved = with_db(
        lambda db, clock: service.resolve(
            db, clock, incident_id, responsible=responsible, refund=amount, note=note, actor=who
        )
    )
    print_json(resolved.resource())
