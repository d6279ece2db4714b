"""``transfers clients messages`` and ``transfers messages list/show`` through click's runner on the session
database (docs/rules/messages.md#settings, #seen): the settings printed as JSON, every bad input one
``error:`` line naming the field, exit 1 and nothing changed; the messages listed masked, one shown with
its body."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
from click.testing import Result
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory
from tests.incidents.helpers import approved_booking
from tests.integration.test_cli_clients import audit_rows, cli_env, run_cli  # noqa: F401 (cli_env: a fixture)
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import traveller_messages
from transfers.messages import repository as repo
from transfers.messages.models import Channel, NewMessage, Status, Template


def settings_of(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, (result.exit_code, result.output, result.stderr)
    value: dict[str, Any] = json.loads(result.stdout)
    return value


async def test_settings_are_shown_changed_and_printed_as_json(
    db: Database,
    make_client: ClientFactory,
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    client_id, _ = await make_client()
    shown = settings_of(await run_cli(cli_env, "clients", "messages", str(client_id)))
    assert shown == {
        "client_id": client_id,
        "channels": [],
        "brand_name": None,
        "sms_sender": None,
        "reply_to": None,
        "support_phone": None,
        "default_language": None,
        "feedback": False,
        "travellers_consented_at": None,
        "updated_at": None,
    }
    changed = settings_of(
        await run_cli(
            cli_env,
            "clients",
            "messages",
            str(client_id),
            "--channels",
            "email,sms",
            "--brand-name",
            " Sunny Trips ",
            "--sms-sender",
            "SunnyTrips",
            "--reply-to",
            "help@sunny.example",
            "--support-phone",
            "0044 20 7946 0555",
            "--default-language",
            "DE",
            "--feedback",
            "on",
            "--travellers-consented",
        )
    )
    consented = changed.pop("travellers_consented_at")
    assert consented is not None and changed.pop("updated_at") is not None
    assert changed == {
        "client_id": client_id,
        "channels": ["email", "sms"],
        "brand_name": "Sunny Trips",
        "sms_sender": "SunnyTrips",
        "reply_to": "help@sunny.example",
        "support_phone": "+442079460555",
        "default_language": "de",
        "feedback": True,
    }
    # one flag changes one setting; the rest, and the consent's time, stay
    again = settings_of(
        await run_cli(cli_env, "clients", "messages", str(client_id), "--channels", "email", "--sms-sender", "")
    )
    assert (again["channels"], again["sms_sender"], again["travellers_consented_at"], again["brand_name"]) == (
        ["email"],
        None,
        consented,
        "Sunny Trips",
    )
    assert [r["action"] for r in await audit_rows(db, f"client:{client_id}")][-2:] == [
        "client.message_settings",
        "client.message_settings",
    ]


async def test_every_bad_setting_is_refused_and_changes_nothing(
    db: Database,
    make_client: ClientFactory,
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    client_id, _ = await make_client()
    before = settings_of(
        await run_cli(cli_env, "clients", "messages", str(client_id), "--channels", "email", "--brand-name", "Sunny")
    )
    bad = [
        (["--brand-name", "x" * 31], "brand_name"),
        (["--brand-name", ""], "brand_name"),
        (["--brand-name", "Sunny\u202eTrips"], "brand_name"),
        (["--sms-sender", "Sunny-Trips"], "sms_sender"),
        (["--sms-sender", "AB"], "sms_sender"),
        (["--sms-sender", "123456"], "sms_sender"),
        (["--reply-to", "not an address"], "reply_to"),
        (["--support-phone", "020 7946 0555"], "support_phone"),
        (["--default-language", "xx"], "default_language"),
        (["--default-language", "pt-BR"], "default_language"),
        (["--channels", "email,fax"], "channels"),
        (["--channels", "email,sms"], "channels"),  # sms without the travellers' consent
        (["--channels", "email", "--brand-name", "Fine", "--sms-sender", "no!"], "sms_sender"),
    ]
    for flags, field in bad:
        result = await run_cli(cli_env, "clients", "messages", str(client_id), *flags)
        assert result.exit_code == 1, (flags, result.output)
        assert result.stderr.startswith(f"error: {field}: "), (flags, result.stderr)
        assert result.stdout == ""
    assert settings_of(await run_cli(cli_env, "clients", "messages", str(client_id))) == before

    unknown = await run_cli(cli_env, "clients", "messages", "999999999", "--brand-name", "Sunny")
    assert unknown.exit_code == 1 and "no client 999999999" in unknown.stderr
    shown_unknown = await run_cli(cli_env, "clients", "messages", "999999999")
    assert shown_unknown.exit_code == 1
    usage = await run_cli(cli_env, "clients", "messages", str(client_id), "--feedback", "maybe")
    assert usage.exit_code == 2
    not_a_number = await run_cli(cli_env, "clients", "messages", "abc")
    assert not_a_number.exit_code == 2
    blank = await run_cli(cli_env, "clients", "messages", str(client_id + 10**6), "--channels", "email")
    assert blank.exit_code == 1


async def test_messages_are_listed_masked_and_shown_with_their_body(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    _, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    now = clock.now()
    base: dict[str, Any] = {
        "booking_id": int(row["id"]),
        "client_id": int(row["client_id"]),
        "language": "de",
        "status": Status.SCHEDULED,
        "revision": "1",
        "scheduled_for": now,
        "expires_at": row["pickup_at"],
    }
    email = NewMessage(template=Template.CONFIRMED, channel=Channel.EMAIL, to_address="ada@example.com", **base)
    sms = NewMessage(
        template=Template.REMINDER,
        channel=Channel.SMS,
        to_address="+447911123456",
        **{**base, "scheduled_for": now + timedelta(hours=2)},
    )
    async with db.write() as conn:
        await repo.insert_messages(conn, [email, sms], now)
        await conn.execute(
            traveller_messages.update()
            .where(traveller_messages.c.dedupe_key == email.dedupe_key)
            .values(status="sent", sent_at=now, subject="Ihre Fahrt ist bestätigt", body="Hallo Ada,\nTB-1\x1b[31m ok")
        )
        ids = dict(
            (
                await conn.execute(
                    select(traveller_messages.c.template, traveller_messages.c.id).where(
                        traveller_messages.c.booking_id == row["id"]
                    )
                )
            ).all()
        )

    listed = await run_cli(cli_env, "messages", "list", "--booking", reservation_no, "--json")
    assert listed.exit_code == 0, listed.stderr
    assert json.loads(listed.stdout) == [
        {
            "id": ids["confirmed"],
            "template": "confirmed",
            "channel": "email",
            "to": "a***@example.com",
            "language": "de",
            "status": "sent",
            "reason": None,
            "scheduled_for": now.isoformat(),
            "sent_at": now.isoformat(),
        },
        {
            "id": ids["reminder"],
            "template": "reminder",
            "channel": "sms",
            "to": "+44 7*** ***456",
            "language": "de",
            "status": "scheduled",
            "reason": None,
            "scheduled_for": (now + timedelta(hours=2)).isoformat(),
            "sent_at": None,
        },
    ]
    table = await run_cli(cli_env, "messages", "list", "--booking", reservation_no)
    assert table.exit_code == 0 and "a***@example.com" in table.stdout and "ada@example.com" not in table.stdout
    assert table.stdout.splitlines()[0].split()[:3] == ["ID", "TEMPLATE", "CHANNEL"]

    shown = await run_cli(cli_env, "messages", "show", str(ids["confirmed"]), "--json")
    assert shown.exit_code == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert (detail["subject"], detail["body"], detail["to"]) == (
        "Ihre Fahrt ist bestätigt",
        "Hallo Ada,\nTB-1\x1b[31m ok",
        "a***@example.com",
    )
    text = await run_cli(cli_env, "messages", "show", str(ids["confirmed"]))
    assert text.exit_code == 0 and "Hallo Ada," in text.stdout and "\x1b" not in text.stdout
    unsent = await run_cli(cli_env, "messages", "show", str(ids["reminder"]))
    assert unsent.exit_code == 0 and "(no body" in unsent.stdout

    for args in (
        ["messages", "list", "--booking", "TB-NOSUCH1"],
        ["messages", "list", "--booking", "TB-" + "X" * 200],
        ["messages", "show", "999999999"],
    ):
        missing = await run_cli(cli_env, *args)
        assert missing.exit_code == 1 and missing.stderr.startswith("error: no "), (args, missing.stderr)
    for args in (["messages", "list"], ["messages", "show", "abc"]):
        assert (await run_cli(cli_env, *args)).exit_code == 2
