"""``transfers partners ...``: register, list, disable and enable transport companies."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import click

from transfers.cancellation.policy import Policy, PolicyError, parse_spec
from transfers.cli.common import actor, fail, print_json, settings, with_db
from transfers.cli.tables import render
from transfers.partners import fields, service
from transfers.partners.models import InvalidPartnerUrl, check_base_url
from transfers.partners.secrets_box import SecretBox, resolve_secret_key


def parse_service_area(text: str) -> tuple[str, ...]:
    """``--airports``: the rules of ``partners/fields.service_area``."""
    try:
        return fields.service_area(text)
    except ValueError as exc:
        raise ValueError(f"--airports: {exc}") from None


def parse_markup(text: str) -> Decimal:
    """``--markup``: the rules of ``partners/fields.markup``."""
    try:
        return fields.markup(text)
    except ValueError as exc:
        raise ValueError(f"--markup {exc}") from None


POLICY_HELP = (
    "default cancellation policy: HOURS:PERCENT tiers, e.g. 48:0,24:50,0:100 "
    "(free until 48 h before pickup, then 50 %, from 24 h 100 %); 'none': free until pickup"
)


def parse_policy_option(text: str | None) -> Policy | None:
    """``--cancellation-policy``: None when not given or ``none``; otherwise a well-formed policy."""
    if text is None or text.strip().lower() == "none":
        return None
    try:
        return parse_spec(text)
    except PolicyError as exc:
        raise ValueError(f"--cancellation-policy: {exc}") from None


def _box() -> SecretBox:
    return SecretBox(resolve_secret_key(settings()))


@click.group("partners")
def partners_group() -> None:
    """Partners (transport companies) the service asks for vehicles."""


@partners_group.command("create")
@click.option("--name", required=True)
@click.option(
    "--base-url",
    default=None,
    help="where the partner serves /booking/search, /booking/create, ... (not with --hosted)",
)
@click.option("--airports", required=True, help="service area: comma-separated IATA codes, or * for every airport")
@click.option(
    "--markup", default=None, help="percent added to the partner's prices [default: TRANSFERS_DEFAULT_MARKUP_PERCENT]"
)
@click.option(
    "--hosted",
    is_flag=True,
    help="no server of its own: prices from its rate card (partners rate-card set), bookings in the portal",
)
@click.option("--cancellation-policy", "cancellation_policy", default=None, help=POLICY_HELP)
def partners_create(
    name: str, base_url: str | None, airports: str, markup: str | None, hosted: bool, cancellation_policy: str | None
) -> None:
    """Register a partner; prints its reverse-API key, outbound token and signing secret once
    (a --hosted partner: its reverse-API key only)."""
    cfg = settings()
    name = name.strip()
    if not name or len(name) > 200:
        fail("--name must be 1..200 characters")
    if hosted and base_url is not None:
        fail("--base-url: a --hosted partner has no server (its prices come from its rate card)")
    if not hosted and base_url is None:
        fail("--base-url is required (or --hosted for a partner without a server)")
    try:
        area = parse_service_area(airports)
        markup_percent = parse_markup(markup) if markup is not None else cfg.default_markup_percent
        url = (
            "" if base_url is None else check_base_url(base_url.strip(), allow_private=cfg.private_partner_urls_allowed)
        )
        policy = parse_policy_option(cancellation_policy)
    except InvalidPartnerUrl as exc:
        fail(f"--base-url: {exc}")
        return
    except ValueError as exc:
        fail(str(exc))
        return
    box = _box()
    if hosted:
        from transfers.hosted.service import register_hosted_partner

        made = with_db(
            lambda db, clock: register_hosted_partner(
                db, clock, box, name=name, airports=area, markup_percent=markup_percent, actor=actor()
            )
        )
        print_json({"partner_id": made.partner_id, "api_key": made.api_key})
        return
    created = with_db(
        lambda db, clock: service.register_partner(
            db,
            clock,
            box,
            name=name,
            base_url=url,
            airports=area,
            markup_percent=markup_percent,
            allow_private=cfg.private_partner_urls_allowed,
            actor=actor(),
            cancellation_policy=policy,
        )
    )
    print_json(
        {
            "partner_id": created.partner_id,
            "api_key": created.api_key,
            "outbound_token": created.outbound_token,
            "signing_secret": created.signing_secret,
        }
    )


@partners_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def partners_list(as_json: bool) -> None:
    """Every partner with its status, URL, service area and markup (never its secrets)."""
    rows: list[dict[str, Any]] = [
        {
            "id": p.partner_id,
            "name": p.name,
            "status": p.status,
            "base_url": p.base_url,
            "airports": ",".join(p.airports),
            "markup": f"{p.markup_percent.normalize():f}%",
            "sandbox": p.is_sandbox,
            "hosted": p.hosted,
            "cancellation_policy": p.cancellation_policy.spec() if p.cancellation_policy else None,
        }
        for p in with_db(lambda db, _clock: service.list_partners(db))
    ]
    if as_json:
        print_json(rows)
        return
    columns = ["id", "name", "status", "base_url", "airports", "markup"]
    click.echo(
        render(
            columns,
            [[row[c] if (c, row["hosted"]) != ("base_url", True) else "(hosted)" for c in columns] for row in rows],
        )
    )


def _set_status(partner_id: int, status: str) -> None:
    with_db(lambda db, clock: service.set_partner_status(db, clock, partner_id, status, actor=actor()))
    print_json({"partner_id": partner_id, "status": status})


@partners_group.command("disable")
@click.argument("partner_id", type=int)
def partners_disable(partner_id: int) -> None:
    """Stop asking a partner for vehicles (searches skip it within TRANSFERS_PARTNER_CACHE_SECONDS)."""
    _set_status(partner_id, "disabled")


@partners_group.command("enable")
@click.argument("partner_id", type=int)
def partners_enable(partner_id: int) -> None:
    """Ask a disabled partner again (searches do within TRANSFERS_PARTNER_CACHE_SECONDS)."""
    _set_status(partner_id, "enabled")


def _finite(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):  # FloatRange lets "nan" through
        raise click.BadParameter("must be a number of hours from 0 to 720")
    return value


@partners_group.command("rotate-secret")
@click.argument("partner_id", type=int)
@click.option(
    "--overlap-hours",
    type=click.FloatRange(min=0, max=720),
    default=None,
    callback=_finite,
    help="how long calls also carry the old secret's signature [default: TRANSFERS_PARTNER_SECRET_OVERLAP_HOURS, 24]",
)
def partners_rotate_secret(partner_id: int, overlap_hours: float | None) -> None:
    """Give a partner a new signing secret; prints it once. Calls carry both signatures (new and
    old) during the overlap, so the partner can switch whenever it likes within it."""
    from datetime import timedelta

    from transfers.partners import rotation

    hours = settings().partner_secret_overlap_hours if overlap_hours is None else overlap_hours
    box = _box()
    rotated = with_db(
        lambda db, clock: rotation.rotate_signing_secret(
            db, clock, box, partner_id, overlap=timedelta(hours=hours), actor=actor()
        )
    )
    print_json(
        {
            "partner_id": rotated.partner_id,
            "signing_secret": rotated.signing_secret,
            "previous_secret_valid_until": rotated.previous_valid_until.isoformat(),
        }
    )


@partners_group.command("update")
@click.argument("partner_id", type=int)
@click.option("--cancellation-policy", "cancellation_policy", default=None, help=POLICY_HELP)
@click.option(
    "--follow-flight-minutes",
    type=click.IntRange(*service.FOLLOW_FLIGHT_RANGE),
    default=None,
    help="how far a pickup may follow a late or early flight (0: never; 180 by default)",
)
@click.option(
    "--free-wait-minutes",
    type=click.IntRange(*service.FREE_WAIT_RANGE),
    default=None,
    help="the free waiting time after an airport pickup (60 by default; bookings keep theirs)",
)
def partners_update(
    partner_id: int,
    cancellation_policy: str | None,
    follow_flight_minutes: int | None,
    free_wait_minutes: int | None,
) -> None:
    """Change a partner's default cancellation policy (offers quoted from then on carry it; booked
    bookings keep theirs) and its flight limits (docs/rules/flights.md#partner-policy). Prints
    {"partner_id"} with what was changed: "cancellation_policy", "follow_flight_minutes", "free_wait_minutes"."""
    if cancellation_policy is None and follow_flight_minutes is None and free_wait_minutes is None:
        fail("nothing to change: give --cancellation-policy, --follow-flight-minutes or --free-wait-minutes", 2)
        return
    try:
        policy = None if cancellation_policy is None else parse_policy_option(cancellation_policy)
    except ValueError as exc:
        fail(str(exc))
        return
    answer: dict[str, Any] = {"partner_id": partner_id}
    if cancellation_policy is not None:
        with_db(lambda db, clock: service.set_cancellation_policy(db, clock, partner_id, policy, actor=actor()))
        answer["cancellation_policy"] = None if policy is None else policy.public()
    if follow_flight_minutes is not None or free_wait_minutes is not None:
        limits = with_db(
            lambda db, clock: service.set_flight_policy(
                db,
                clock,
                partner_id,
                follow_flight_minutes=follow_flight_minutes,
                free_wait_minutes=free_wait_minutes,
                actor=actor(),
            )
        )
        answer.update(limits)
    print_json(answer)


@partners_group.command("check")
@click.argument("url")
@click.option("--token", required=True, help="the outbound token (ot_...) the service presents to the partner")
@click.option("--secret", required=True, help="the signing secret (whsec_...) the service signs with")
@click.option("--airport", default="LHR", show_default=True, help="IATA code of an airport the partner serves")
@click.option(
    "--timeout-search",
    type=click.FloatRange(min=0, min_open=True),
    default=3.0,
    show_default=True,
    help="search deadline, seconds",
)
@click.option(
    "--timeout-create",
    type=click.FloatRange(min=0, min_open=True),
    default=2.0,
    show_default=True,
    help="deadline of the first create attempt, seconds",
)
@click.option("--json", "as_json", is_flag=True, help="the results as one JSON object instead of a table")
def partners_check(
    url: str, token: str, secret: str, airport: str, timeout_search: float, timeout_create: float, as_json: bool
) -> None:
    """Run the conformance suite against a partner's server; exit 1 unless every check passes.

    Calls search, create (twice, same webhook-id), info and update (cancel), signed exactly as the
    service signs them, and checks that calls with a bad signature, a wrong bearer token or a stale
    timestamp are refused with 401. The test booking (TB-CHECK...) is cancelled again.
    """
    import asyncio

    import structlog

    from transfers.partners import conformance
    from transfers.reference.airports import find_airport

    try:
        base_url = check_base_url(url.strip(), allow_private=True)  # a developer tool: local servers too
    except InvalidPartnerUrl as exc:
        raise click.BadParameter(str(exc), param_hint="URL") from None
    if not token.strip():
        raise click.BadParameter("must not be empty", param_hint="--token")
    secret_problem = conformance.secret_problem(secret)
    if secret_problem:
        raise click.BadParameter(secret_problem, param_hint="--secret")
    place = find_airport(airport.strip())
    if place is None:
        raise click.BadParameter(f"unknown IATA airport code {airport!r}", param_hint="--airport")
    deadlines = conformance.Deadlines(search=timeout_search, create=timeout_create)
    # The partner client logs every refused call as a warning; refusals are expected here and the
    # report below says everything, so those lines are kept off the terminal.
    with structlog.testing.capture_logs():
        report = asyncio.run(
            conformance.run_conformance(
                base_url, token=token.strip(), secret=secret, airport=place, deadlines=deadlines
            )
        )
    if as_json:
        print_json(report.as_dict())
    else:

        def ms(value: float | None) -> str | None:
            return None if value is None else f"{value:.0f} ms"

        rows = [[c.name, c.result, ms(c.duration_ms), ms(c.deadline_ms), c.detail] for c in report.checks]
        click.echo(f"partner {base_url}, airport {report.airport}")
        click.echo(render(["check", "result", "time", "deadline", "detail"], rows, right=("time", "deadline")))
        summary = report.as_dict()["summary"]
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {summary['PASS']} passed, {summary['FAIL']} failed, "
            f"{summary['SKIP']} skipped of {len(report.checks)} checks"
        )
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    raise SystemExit(0 if report.passed else 1)
