"""``transfers clients messages ID ...`` (a client's message settings) and ``transfers messages list`` /
``show`` (the messages to a booking's traveller), docs/rules/messages.md#settings and #seen."""

from __future__ import annotations

from typing import Any

import click

from transfers.cli.common import actor, print_json, with_db
from transfers.cli.tables import render, render_pairs, safe
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.errors import NotFound
from transfers.messages import repository as repo
from transfers.messages import settings_service
from transfers.messages.settings_rules import SettingsChange
from transfers.messages.views import message_resource

MAX_RESERVATION_NO = 64


class NoSuchMessage(NotFound):
    """No message, or no booking, by what was named."""


@click.command("messages")
@click.argument("client_id", type=int)
@click.option("--channels", default=None, help='the channels on, e.g. "email,sms" ("" turns every one off)')
@click.option("--brand-name", default=None, help="1..30 characters; opens every message")
@click.option("--sms-sender", default=None, help='3..11 of A-Z a-z 0-9 and spaces, a letter among them ("" clears)')
@click.option("--reply-to", default=None, help='the e-mail replies go to ("" clears)')
@click.option("--support-phone", default=None, help='with its country code, e.g. "+44 20 7946 0123" ("" clears)')
@click.option("--default-language", default=None, help="en, de, fr, es, it, pt or nl")
@click.option("--feedback", type=click.Choice(["on", "off"]), default=None, help="the rating e-mail after the ride")
@click.option(
    "--travellers-consented",
    is_flag=True,
    help="the client confirms its travellers agreed to be texted (needed for sms)",
)
def clients_messages(
    client_id: int,
    channels: str | None,
    brand_name: str | None,
    sms_sender: str | None,
    reply_to: str | None,
    support_phone: str | None,
    default_language: str | None,
    feedback: str | None,
    travellers_consented: bool,
) -> None:
    """Show or change a client's messages to its travellers; prints the settings as JSON."""
    change = SettingsChange(
        channels=None if channels is None else channels.split(","),
        brand_name=brand_name,
        sms_sender=sms_sender,
        reply_to=reply_to,
        support_phone=support_phone,
        default_language=default_language,
        feedback=None if feedback is None else feedback == "on",
        travellers_consented=travellers_consented,
    )

    async def work(db: Database, clock: SystemClock) -> dict[str, Any]:
        if change == SettingsChange():
            return (await settings_service.get_settings(db, client_id)).resource()
        return (await settings_service.update_settings(db, clock, client_id, change, actor=actor())).resource()

    print_json(with_db(work))


@click.group("messages")
def messages_group() -> None:
    """Messages to travellers: what was sent, when, and how it went."""


@messages_group.command("list")
@click.option("--booking", "reservation_no", required=True, help="the reservation number, TB-...")
@click.option("--json", "as_json", is_flag=True, help="one JSON array of messages, as the API shows them")
def messages_list(reservation_no: str, as_json: bool) -> None:
    """The messages to a booking's traveller (addresses masked)."""
    reservation_no = reservation_no.strip()

    async def work(db: Database, _clock: SystemClock) -> list[dict[str, Any]]:
        async with db.read() as conn:
            booking_id = (
                None if len(reservation_no) > MAX_RESERVATION_NO else await repo.booking_id_of(conn, reservation_no)
            )
            if booking_id is None:
                raise NoSuchMessage(f"no booking {reservation_no}")
            return [message_resource(m) for m in await repo.messages_of_booking(conn, booking_id)]

    found = with_db(work)
    if as_json:
        print_json(found)
        return
    columns = ["id", "template", "channel", "to", "language", "status", "reason", "scheduled_for", "sent_at"]
    click.echo(render(columns, [[m[c] for c in columns] for m in found], right={"id"}, empty="(no messages)"))


@messages_group.command("show")
@click.argument("message_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="one JSON object")
def messages_show(message_id: int, as_json: bool) -> None:
    """One message with its rendered subject and body (kept 30 days)."""

    async def work(db: Database, _clock: SystemClock) -> dict[str, Any]:
        async with db.read() as conn:
            found = await repo.message(conn, message_id)
        if found is None:
            raise NoSuchMessage(f"no message {message_id}")
        return message_resource(found, detail=True)

    shown = with_db(work)
    if as_json:
        print_json(shown)
        return
    body = shown.pop("body")
    click.echo(render_pairs(list(shown.items())))
    click.echo("")
    if body is None:
        click.echo("(no body: not sent yet, or older than 30 days)")
    for line in (body or "").splitlines():
        click.echo(safe(line))  # the body holds names typed by others: terminal-safe
