"""``transfers sandbox-partner``: the reference partner as its own server."""

from __future__ import annotations

import click
import uvicorn

from transfers.cli.common import fail, settings
from transfers.logging import configure_logging
from transfers.partners.secrets_box import SecretBox, SecretKeyMissing, resolve_secret_key
from transfers.partners.service import sandbox_credentials
from transfers.sandbox_partner import SandboxPartnerConfig, create_sandbox_partner_app


@click.command("sandbox-partner")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8100, show_default=True, type=int)
@click.option("--service-url", required=True, help="the booking service, e.g. http://127.0.0.1:8000")
@click.option("--api-key", required=True, help="this partner's reverse-API key (from `transfers partners create`)")
@click.option(
    "--approve-after",
    type=float,
    default=None,
    help="seconds until a booking is approved [default: TRANSFERS_SANDBOX_APPROVE_AFTER_SECONDS]",
)
@click.option(
    "--signing-secret",
    default=None,
    help="whsec_... from `partners create` [default: the built-in sandbox partner's, derived from the secret key]",
)
@click.option(
    "--outbound-token", default=None, help="ot_... from `partners create` [default: the built-in sandbox partner's]"
)
@click.option("--currency", default="EUR", show_default=True, help="currency of the fleet's prices")
def sandbox_partner(
    host: str,
    port: int,
    service_url: str,
    api_key: str,
    approve_after: float | None,
    signing_secret: str | None,
    outbound_token: str | None,
    currency: str,
) -> None:
    """Serve the reference sandbox partner (approves bookings through the reverse API)."""
    cfg = settings()
    if signing_secret is None or outbound_token is None:
        # The built-in sandbox partner's credentials: the same ones `transfers serve` registers,
        # so this process can stand in for the embedded partner with no secrets on the command line.
        try:
            derived = sandbox_credentials(SecretBox(resolve_secret_key(cfg)))
        except SecretKeyMissing as exc:
            fail(f"{exc} (or pass --signing-secret and --outbound-token)")
            return
        signing_secret = signing_secret or derived.signing_secret
        outbound_token = outbound_token or derived.outbound_token
    if not signing_secret.startswith("whsec_"):
        fail("--signing-secret must be the whsec_... value printed by `transfers partners create`")
    try:
        config = SandboxPartnerConfig(
            service_url=service_url.rstrip("/"),
            api_key=api_key,
            signing_secret=signing_secret,
            outbound_token=outbound_token,
            approve_after_seconds=cfg.sandbox_approve_after_seconds if approve_after is None else approve_after,
            currency=currency.upper(),
        )
    except ValueError as exc:
        fail(str(exc))
        return
    configure_logging(cfg.log_level, cfg.log_format)
    uvicorn.run(
        create_sandbox_partner_app(config),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
    )
