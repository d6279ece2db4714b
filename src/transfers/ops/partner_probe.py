"""``transfers doctor``'s look at one enabled partner: its host takes a TCP connection, completes a
TLS handshake (https), and answers a signed search for its first airport within the deadline with
a body the service accepts. The search is the conformance suite's own check (``partners/conformance/search.py``):
built, signed and judged exactly as the service does it."""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.conformance import ConformanceRun, Deadlines, contract_schemas
from transfers.partners.models import EVERY_AIRPORT, PartnerRecord
from transfers.reference.airports import find_airport

ANY_AIRPORT = "LHR"  # asked of partners serving every airport (*)


@dataclass(frozen=True)
class PartnerVerdict:
    partner: str  # "3 Heathrow Cars"
    passed: bool
    detail: str


async def probe_partner(
    record: PartnerRecord, endpoint: PartnerEndpoint, client: PartnerClient, deadline: float
) -> PartnerVerdict:
    label = f"{record.partner_id} {record.name}"
    steps: list[str] = []
    parts = urlsplit(endpoint.base_url)
    host = parts.hostname or ""
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    tcp = await _connect(host, port, None, deadline)
    if isinstance(tcp, str):
        return PartnerVerdict(label, False, f"{endpoint.base_url}: TCP to {host}:{port}: {tcp}")
    steps.append(f"tcp {tcp:.0f} ms")
    if secure:
        tls = await _connect(host, port, ssl.create_default_context(), deadline)
        if isinstance(tls, str):
            return PartnerVerdict(label, False, f"{endpoint.base_url}: TLS with {host}:{port}: {tls}")
        steps.append(f"tls {tls:.0f} ms")
    code = ANY_AIRPORT if not record.airports or record.airports[0] == EVERY_AIRPORT else record.airports[0]
    airport = find_airport(code)
    if airport is None:
        return PartnerVerdict(label, False, f"its first airport {code!r} is not a known IATA code")
    run = ConformanceRun(client, endpoint, airport, Deadlines(search=deadline), contract_schemas())
    await run.check_search(run.search_payload())
    check = run.checks[-1]
    took = f"{check.duration_ms:.0f} ms" if check.duration_ms is not None else "-"
    if check.result != "PASS":
        return PartnerVerdict(label, False, f"{endpoint.base_url}: search at {code}: {check.detail}")
    return PartnerVerdict(label, True, ", ".join([*steps, f"search at {code} {took}: {check.detail}"]))


async def _connect(host: str, port: int, context: ssl.SSLContext | None, deadline: float) -> float | str:
    """Milliseconds to connect (and shake hands when ``context``), or why it failed."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(deadline):
            _, writer = await asyncio.open_connection(
                host, port, ssl=context, server_hostname=host if context else None
            )
    except TimeoutError:
        return f"no connection within {deadline:g} s"
    except ssl.SSLError as exc:
        return f"handshake failed ({exc.reason or exc})"
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    took = (time.monotonic() - started) * 1000
    writer.close()
    try:
        async with asyncio.timeout(1):
            await writer.wait_closed()
    except (TimeoutError, OSError, ssl.SSLError):
        pass
    return took
