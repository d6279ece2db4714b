"""A conformance suite for a partner's server: ``transfers partners check URL``.

It calls the four partner endpoints (PARTNER_API.md 3.1-3.4) the way the service does, with the
service's own ``PartnerClient`` (same JSON bytes, headers and Standard Webhooks signature), and
judges every answer the way the service would: by the service's validators
(``transfers.partners.wire``), by the published OpenAPI document (``openapi/partner.yaml``, when
``jsonschema`` and ``PyYAML`` are installed) and by the time budgets. Then it checks that the
server refuses calls that are not the service's (bad signature, wrong bearer token, stale
timestamp) with 401.

The bookings it makes are test bookings (``TB-CHECK...``) and are cancelled again at the end.
"""

from __future__ import annotations

import base64
import math
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, TypeVar

import httpx
import orjson
from pydantic import BaseModel, ValidationError

from transfers.api.context import request_id_var
from transfers.partners.client import CallResult, Outcome, PartnerClient, PartnerEndpoint, info_path
from transfers.partners.signing import SECRET_PREFIX, new_signing_secret, signature_headers
from transfers.partners.wire import (
    WireCreateAnswer,
    WireInfoAnswer,
    WireResult,
    WireSearchAnswer,
    WireVehicle,
    search_request,
)
from transfers.search.airports import Airport

# The reference data set (migration 0002, ``GET /api/public/car/type``; ``VehicleType`` in partner.yaml).
REFERENCE_VEHICLE_TYPES = frozenset({"SEDAN", "ESTATE", "MINIVAN", "MINIBUS", "BUS", "LUXURY", "ELECTRIC"})
DISTANCE_KM = 20.0  # how far from the airport the test drop-off point lies
DAYS_AHEAD = 3
PARTY_ADULTS = 2
RESERVATION_PREFIX = "TB-CHECK"
_REF_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
_MAX_REASON = 300

Verdict = Literal["PASS", "FAIL", "SKIP"]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Deadlines:
    """Seconds each call may take (PARTNER_API.md 3): search 3 s, first create attempt 2 s,
    later create attempts, info and update 3 s."""

    search: float = 3.0
    create: float = 2.0
    other: float = 3.0

    def wait(self, deadline: float) -> float:
        """How long to keep listening: past the deadline too, to report how late an answer is."""
        return deadline + max(deadline, 1.0)


@dataclass
class Check:
    name: str
    method: str
    path: str
    result: Verdict
    duration_ms: float | None = None
    deadline_ms: float | None = None
    http_status: int | None = None
    reason: str | None = None  # why it failed or was skipped
    note: str | None = None  # what was seen when it passed

    @property
    def detail(self) -> str | None:
        return self.reason if self.result != "PASS" else self.note


@dataclass
class Report:
    base_url: str
    airport: str
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reservation_no: str | None = None  # the test booking's number (TB-CHECK...), when create was tried

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.result == "PASS" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url, "airport": self.airport, "passed": self.passed,
            "reservation_no": self.reservation_no,
            "summary": {verdict: sum(c.result == verdict for c in self.checks) for verdict in ("PASS", "FAIL", "SKIP")},
            "checks": [asdict(c) for c in self.checks],
            "warnings": list(self.warnings),
        }


# -- the published OpenAPI document -------------------------------------------------------------

_DOC_URI = "urn:transfers:partner-openapi"


class ContractSchemas:
    """Validates answers against the 2xx response schema of one operation in partner.yaml."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self._validators: dict[tuple[str, str], Any] = {}
        try:
            import jsonschema  # type: ignore[import-untyped]
            import yaml  # type: ignore[import-untyped]
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012
        except ImportError as exc:
            self.unavailable = (f"answers not checked against partner.yaml ({exc.name} is not installed: "
                                "pip install jsonschema pyyaml); the service's own validators still ran")
            return
        text = resources.files("transfers").joinpath("openapi/partner.yaml").read_text(encoding="utf-8")
        self._doc: dict[str, Any] = dict(yaml.safe_load(text))
        self._registry: Any = Registry().with_resource(_DOC_URI, Resource.from_contents(self._doc, DRAFT202012))
        self._validator_class: Any = jsonschema.Draft202012Validator
        self._best_match: Callable[..., Any] = jsonschema.exceptions.best_match

    def component_errors(self, name: str, instance: Any) -> list[str]:
        """Every error of ``instance`` against ``#/components/schemas/<name>`` (for requests we send)."""
        if self.unavailable is not None:
            return []
        validator = self._validator_class({"$ref": f"{_DOC_URI}#/components/schemas/{name}"}, registry=self._registry)
        return [f"{_location(list(e.absolute_path))}: {e.message}" for e in validator.iter_errors(instance)]

    def errors(self, method: str, path: str, instance: Any) -> list[str]:
        """At most one readable error (the most relevant one); [] when valid or unavailable."""
        if self.unavailable is not None:
            return []
        key = (method, path)
        if key not in self._validators:  # the operation's 200 application/json schema, by JSON pointer
            parts = ["paths", path, method.lower(), "responses", "200", "content", "application/json", "schema"]
            pointer = "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)
            self._validators[key] = self._validator_class({"$ref": f"{_DOC_URI}#/{pointer}"}, registry=self._registry)
        error = self._best_match(self._validators[key].iter_errors(instance))
        if error is None:
            return []
        where = _location(list(error.absolute_path))
        return [f"{where}: {error.message} (partner.yaml)"]


@lru_cache(maxsize=1)
def contract_schemas() -> ContractSchemas:
    return ContractSchemas()


# -- helpers -----------------------------------------------------------------------------------


def _location(parts: Sequence[int | str]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "answer"


def wire_errors(model: type[BaseModel], body: Any, limit: int = 3) -> list[str]:
    """The service's validator's complaints, as ``vehicles[0].price: must be positive ...``."""
    try:
        model.model_validate(body)
    except ValidationError as exc:
        out = []
        for err in exc.errors()[:limit]:
            loc = [p for p in err["loc"] if isinstance(p, int | str)]
            out.append(f"{_location(loc)}: {_wire_message(err, loc)}")
        return out
    return []


def _wire_message(err: Any, loc: list[int | str]) -> str:
    if err["type"] == "model_type" and not loc:
        return "must be a JSON object"
    message = str(err["msg"]).removeprefix("Value error, ")
    field_name = str(loc[-1]) if loc else ""
    message = message.removeprefix(field_name + " ") if field_name else message
    value = err.get("input")
    if field_name == "price" and isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            if Decimal(str(value)) <= 0:
                message = "must be positive"
        except InvalidOperation:
            pass
    if isinstance(value, int | float | str | bool) or value is None:
        message += f" (got {_clip(orjson.dumps(value).decode(), 60)})"
    return message


def destination_point(lat: float, lng: float, distance_km: float, bearing_deg: float) -> tuple[float, float]:
    """The point ``distance_km`` away from (lat, lng) on the given initial bearing (a sphere)."""
    radius = 6371.0088
    delta, theta = distance_km / radius, math.radians(bearing_deg)
    p1, l1 = math.radians(lat), math.radians(lng)
    p2 = math.asin(math.sin(p1) * math.cos(delta) + math.cos(p1) * math.sin(delta) * math.cos(theta))
    l2 = l1 + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(p1),
                         math.cos(delta) - math.sin(p1) * math.sin(p2))
    lng2 = (math.degrees(l2) + 540) % 360 - 180
    return round(math.degrees(p2), 6), round(lng2, 6)


def secret_problem(secret: str) -> str | None:
    """Why ``secret`` cannot be a signing secret, or None."""
    if not secret.startswith(SECRET_PREFIX):
        return "must be the whsec_... value printed by `transfers partners create`"
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except ValueError:
        return "the part after whsec_ is not base64"
    return None if key else "the part after whsec_ is empty"


def check_reservation_no() -> str:
    return RESERVATION_PREFIX + "".join(secrets.choice(_REF_ALPHABET) for _ in range(8))


def _webhook_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _clip(text: str, limit: int = _MAX_REASON) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return f": {_clip(body['message'], 120)!r}"
    return ""


def transport_problem(result: CallResult, wait: float) -> str | None:
    """Why a call produced no usable answer, or None when it did (2xx with JSON or no body)."""
    if result.outcome == "ok":
        return None
    if result.outcome == "timeout":
        return f"no answer within {_ms(wait):.0f} ms"
    if result.outcome == "connect_error":
        return f"could not connect ({result.error})"
    if result.outcome == "invalid":
        return f"answer is not JSON (HTTP {result.http_status})"
    if result.outcome == "too_large":
        return "answer over 1 MiB (the service drops it)"
    if result.outcome == "redirect":
        return f"HTTP {result.http_status}: a redirect (the service does not follow redirects)"
    if result.outcome == "http_error":
        return f"HTTP {result.http_status}{_message(result.body)}"
    return f"{result.outcome}: {result.error}"


def _late(result: CallResult, deadline: float) -> str | None:
    if result.duration_ms > deadline * 1000:
        return f"answered in {result.duration_ms:.0f} ms > {deadline * 1000:.0f} ms deadline"
    return None


# -- the suite ---------------------------------------------------------------------------------


@dataclass
class _Booking:
    reservation_no: str
    payload: dict[str, Any]
    webhook_id: str
    answer: WireCreateAnswer | None = None


class ConformanceRun:
    def __init__(self, client: PartnerClient, endpoint: PartnerEndpoint, airport: Airport,
                 deadlines: Deadlines, schemas: ContractSchemas, *, now: datetime | None = None) -> None:
        self.client = client
        self.endpoint = endpoint
        self.airport = airport
        self.deadlines = deadlines
        self.schemas = schemas
        self.now = now
        self.checks: list[Check] = []
        self.reservation_no: str | None = None

    # -- requests as the service builds them --

    def airport_location(self) -> dict[str, Any]:
        a = self.airport
        return {"type": "AIRPORT", "iata_code": a.iata, "name": a.name, "lat": a.lat, "lng": a.lng}

    def point_location(self) -> dict[str, Any]:
        lat, lng = destination_point(self.airport.lat, self.airport.lng, DISTANCE_KM, 45.0)
        return {"type": "POINT", "name": f"Conformance check point, {DISTANCE_KM:.0f} km from {self.airport.iata}",
                "lat": lat, "lng": lng}

    def pickup_date(self) -> str:
        local = (self.now or datetime.now(self.airport.tz)).astimezone(self.airport.tz) + timedelta(days=DAYS_AHEAD)
        return local.replace(hour=14, minute=30, second=0, microsecond=0).isoformat()

    def search_payload(self) -> dict[str, Any]:
        return search_request(pickup=self.airport_location(), dropoff=self.point_location(), date=self.pickup_date(),
                              adult=PARTY_ADULTS, children=0, infant=0)

    def create_payload(self, reservation_no: str, vehicle: WireVehicle, search: dict[str, Any]) -> dict[str, Any]:
        """As ``bookings.service._create_payload`` builds it: no extras, so the net total is the vehicle's price."""
        return {
            "reservation_no": reservation_no,
            "vehicle_id": vehicle.id,
            "passenger_info": {"name": "Conformance", "surname": "Check", "email": "conformance-check@example.com",
                               "phone": "+447700900123"},
            "flight_info": {"flight_number": "BA117",
                            "extra_requests": "Test booking by `transfers partners check`; it is cancelled again."},
            "trip": {"from": search["from"], "to": search["to"], "date": search["date"],
                     "passengers": search["passengers"], "suitcase": 1, "small_bags": 0},
            "extras": [],
            "price": {"total": f"{vehicle.price:.2f}", "currency": vehicle.currency},
        }

    # -- plumbing --

    async def call(self, method: str, path: str, payload: dict[str, Any] | None, deadline: float, *,
                   webhook_id: str | None = None, endpoint: PartnerEndpoint | None = None) -> CallResult:
        return await self.client.call(endpoint or self.endpoint, method, path, payload,
                                      timeout=self.deadlines.wait(deadline), webhook_id=webhook_id, observe=False)

    def record(self, name: str, method: str, path: str, result: CallResult | None, deadline: float | None,
               problems: list[str], note: str | None = None) -> Check:
        check = Check(
            name=name, method=method, path=path, result="FAIL" if problems else "PASS",
            duration_ms=result.duration_ms if result is not None else None,
            deadline_ms=_ms(deadline) if deadline is not None else None,
            http_status=result.http_status if result is not None else None,
            reason=_clip("; ".join(problems)) if problems else None, note=note,
        )
        self.checks.append(check)
        return check

    def skip(self, name: str, method: str, path: str, reason: str) -> None:
        self.checks.append(Check(name=name, method=method, path=path, result="SKIP", reason=reason))

    def judge(self, result: CallResult, deadline: float, model: type[BaseModel], method: str, path: str,
              extra: Callable[[Any], list[str]] | None = None) -> list[str]:
        """Everything wrong with one answer: transport, lateness, then the service's validator, then
        ``extra`` rules, then the OpenAPI schema (only when the rest found nothing, to avoid echoes)."""
        problem = transport_problem(result, self.deadlines.wait(deadline))
        if problem is not None:
            return [problem]
        problems = [p for p in [_late(result, deadline)] if p]
        body = result.body
        if isinstance(body, dict) and body.get("status") == "Error" and model is not WireResult:
            return [*problems, f'answered {{"status":"Error"}}{_message(body)}']
        found = wire_errors(model, body)
        if not found and extra is not None:
            found = extra(body)
        if not found:
            found = self.schemas.errors(method, path, body)
        return problems + found

    # -- the checks --

    async def run(self) -> list[Check]:
        search = self.search_payload()
        vehicle = await self.check_search(search)
        booking = await self.check_create(vehicle, search)
        await self.check_info(booking)
        await self.check_amend(booking)
        await self.check_update(booking)
        await self.check_refusals(search)
        return self.checks

    async def check_search(self, search: dict[str, Any]) -> WireVehicle | None:
        """The vehicle to book (the first that seats the party), or None."""
        deadline = self.deadlines.search
        result = await self.call("POST", "/booking/search", search, deadline)
        problems = self.judge(result, deadline, WireSearchAnswer, "POST", "/booking/search", _unknown_types)
        answer = _parsed(WireSearchAnswer, result.body) if result.ok else None
        note = None
        if answer is not None:
            types = ", ".join(dict.fromkeys(v.type for v in answer.vehicles))
            note = (f"{len(answer.vehicles)} vehicles ({types}), distance_km {answer.distance_km}" if answer.vehicles
                    else f"no vehicles at {self.airport.iata} (try --airport with an airport you serve)")
        self.record("search", "POST", "/booking/search", result, deadline, problems, note)
        if answer is None or not answer.vehicles:
            return None
        seats = [v for v in answer.vehicles if v.capacity.passengers >= PARTY_ADULTS]
        return (seats or answer.vehicles)[0]

    async def check_create(self, vehicle: WireVehicle | None, search: dict[str, Any]) -> _Booking | None:
        path = "/booking/create"
        if vehicle is None:
            reason = "not run: the search gave no vehicle to book"
            self.skip("create", "POST", path, reason)
            self.skip("create retry, same webhook-id", "POST", path, reason)
            return None
        booking = _Booking(check_reservation_no(), {}, _webhook_id())
        self.reservation_no = booking.reservation_no
        booking.payload = self.create_payload(booking.reservation_no, vehicle, search)
        deadline = self.deadlines.create
        first = await self.call("POST", path, booking.payload, deadline, webhook_id=booking.webhook_id)
        problems = self.judge(first, deadline, WireCreateAnswer, "POST", path)
        booking.answer = _parsed(WireCreateAnswer, first.body) if first.ok else None
        consequence = _create_consequence(first, booking.answer, deadline) if problems else None
        if consequence:
            problems.append(consequence)
        note = None
        if booking.answer is not None:
            note = f"{booking.answer.status} for {booking.reservation_no} (vehicle {booking.payload['vehicle_id']!r}"
            note += f", partner reference {booking.answer.reservation_no})" if booking.answer.reservation_no else ")"
        self.record("create", "POST", path, first, deadline, problems, note)
        if booking.answer is None:
            self.skip("create retry, same webhook-id", "POST", path, "not run: create gave no valid answer")
            return booking
        await self.check_create_retry(booking)
        return booking

    async def check_create_retry(self, booking: _Booking) -> None:
        """The same message again (a retry after a lost answer): the first answer must come back."""
        path, deadline = "/booking/create", self.deadlines.other
        again = await self.call("POST", path, booking.payload, deadline, webhook_id=booking.webhook_id)
        problems = self.judge(again, deadline, WireCreateAnswer, "POST", path)
        second = _parsed(WireCreateAnswer, again.body) if again.ok else None
        note = None
        first = booking.answer
        if second is not None and first is not None:
            if first.reservation_no is not None or second.reservation_no is not None:
                if first.reservation_no != second.reservation_no:
                    problems.append(f"not deduplicated: the retry answered reservation_no {second.reservation_no!r}, "
                                    f"the first delivery {first.reservation_no!r} (a second booking?)")
                note = f"same answer ({first.status}, partner reference {first.reservation_no})"
            else:
                note = f"same status {first.status} (no partner reservation_no to compare)"
            if first.status != second.status:
                problems.append(f"not deduplicated: the retry answered {second.status}, the first {first.status}")
        self.record("create retry, same webhook-id", "POST", path, again, deadline, problems, note)

    async def check_info(self, booking: _Booking | None) -> None:
        deadline = self.deadlines.other
        if booking is None or booking.answer is None:
            self.skip("info", "GET", "/booking/info/{reservation_no}", "not run: no booking was created")
        else:
            path = info_path(booking.reservation_no)
            result = await self.call("GET", path, None, deadline)
            problems = self.judge(result, deadline, WireInfoAnswer, "GET", "/booking/info/{reservation_no}")
            info = _parsed(WireInfoAnswer, result.body) if result.ok else None
            self.record("info", "GET", path, result, deadline, problems, f"status {info.status}" if info else None)
        unknown = info_path(RESERVATION_PREFIX + "-UNKNOWN-" + secrets.token_hex(4).upper())
        result = await self.call("GET", unknown, None, deadline)
        problems = []
        if result.http_status != 404:
            seen = transport_problem(result, self.deadlines.wait(deadline)) or f"HTTP {result.http_status}"
            problems.append(f"{seen} for a booking it never received; expected 404")
        else:
            problems.extend(p for p in [_late(result, deadline)] if p)
        self.record("info, unknown booking", "GET", unknown, result, deadline, problems, "404")

    def amended_payload(self, booking: _Booking) -> dict[str, Any]:
        """An ``AMENDED`` update as ``bookings.amending.amended_payload`` builds it (PARTNER_API.md
        3.5): the flight number and the extra requests change, the rest is the booked trip."""
        flight = {"flight_number": "BA119", "extra_requests": "Amended by `transfers partners check`."}
        created = booking.payload
        return {"reservation_no": booking.reservation_no, "status": "AMENDED",
                "changes": {"travel_details": flight}, "vehicle_id": created["vehicle_id"],
                "passenger_info": created["passenger_info"], "flight_info": flight, "trip": created["trip"],
                "extras": created["extras"]}

    async def check_amend(self, booking: _Booking | None) -> None:
        """An amendment must be answered (issue 15): Success applies it, an Error with a message
        rejects it; both are valid answers, anything else is not."""
        path, deadline, name = "/booking/update", self.deadlines.other, "update AMENDED"
        if booking is None or booking.answer is None:
            self.skip(name, "PUT", path, "not run: no booking was created")
            return
        if booking.answer.status == "DECLINED":
            self.skip(name, "PUT", path, "not run: create answered DECLINED (nothing to amend)")
            return
        result = await self.call("PUT", path, self.amended_payload(booking), deadline, webhook_id=_webhook_id())
        problems = self.judge(result, deadline, WireResult, "PUT", path, _answered_amendment)
        body = result.body if isinstance(result.body, dict) else {}
        note = "Success" if body.get("status") == "Success" else f"Error{_message(body)}"
        self.record(name, "PUT", path, result, deadline, problems, note if not problems else None)

    async def check_update(self, booking: _Booking | None) -> None:
        path, deadline = "/booking/update", self.deadlines.other
        names = ("update CANCELLED", "update CANCELLED again")
        if booking is None or booking.answer is None:
            for name in names:
                self.skip(name, "PUT", path, "not run: no booking was created")
            return
        if booking.answer.status == "DECLINED":
            for name in names:
                self.skip(name, "PUT", path, "not run: create answered DECLINED (nothing to cancel)")
            return
        body = {"reservation_no": booking.reservation_no, "status": "CANCELLED", "cancel_reason": "Change of plans",
                "note": "Test booking by `transfers partners check`"}
        for name in names:  # cancelling twice must answer Success again
            result = await self.call("PUT", path, body, deadline)
            problems = self.judge(result, deadline, WireResult, "PUT", path, _success)
            self.record(name, "PUT", path, result, deadline, problems, "Success")

    async def check_refusals(self, search: dict[str, Any]) -> None:
        path = "/booking/search"
        bad_secret = replace(self.endpoint, signing_secret=new_signing_secret())
        wrong_token = replace(self.endpoint, outbound_token="ot_" + secrets.token_hex(16))
        for name, endpoint, what in (("refuses a bad signature", bad_secret, "a bad signature"),
                                     ("refuses a wrong bearer token", wrong_token, "a wrong bearer token")):
            result = await self.call("POST", path, search, self.deadlines.search, endpoint=endpoint)
            self.record(name, "POST", path, result, None, self._refusal(result, what), "401")
        # Replay protection: correctly signed, but 10 minutes ago. PartnerClient always signs "now",
        # so this one is sent by hand, with the same body bytes and the same signing function.
        result = await self._stale_call(path, search)
        self.record("refuses a stale timestamp", "POST", path, result, None,
                    self._refusal(result, "a signature timestamp 10 minutes old"), "401")

    def _refusal(self, result: CallResult, what: str) -> list[str]:
        if result.http_status == 401:
            return []
        if result.http_status is not None and 200 <= result.http_status < 300:
            return [f"accepted a request with {what} (HTTP {result.http_status}); expected 401"]
        seen = transport_problem(result, self.deadlines.wait(self.deadlines.search)) or f"HTTP {result.http_status}"
        return [f"{seen} for a request with {what}; expected 401"]

    async def _stale_call(self, path: str, payload: dict[str, Any]) -> CallResult:
        body = orjson.dumps(payload)
        headers = {
            "Authorization": f"Bearer {self.endpoint.outbound_token}", "Accept": "application/json",
            "Content-Type": "application/json",
            **signature_headers(self.endpoint.signing_secret, body, timestamp=int(time.time()) - 600),
        }
        wait = self.deadlines.wait(self.deadlines.search)
        started = time.perf_counter()
        try:
            async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=wait) as http:
                response = await http.post(self.endpoint.base_url.rstrip("/") + path, content=body, headers=headers)
        except httpx.TimeoutException:
            return CallResult("timeout", None, None, "timeout", _ms(time.perf_counter() - started))
        except httpx.TransportError as exc:
            return CallResult("connect_error", None, None, type(exc).__name__, _ms(time.perf_counter() - started))
        duration = _ms(time.perf_counter() - started)
        status = response.status_code
        outcome: Outcome = "ok" if status < 300 else "redirect" if status < 400 else "http_error"
        return CallResult(outcome, status, None, None, duration)


def _create_consequence(result: CallResult, answer: WireCreateAnswer | None, deadline: float) -> str | None:
    """What the service does with a create answer that broke the contract (PARTNER_API.md 3.2)."""
    status = result.http_status or 0
    error_body = isinstance(result.body, dict) and result.body.get("status") == "Error"
    if status == 429 or status >= 500 or result.outcome not in ("ok", "http_error"):
        return "the service would retry"
    if result.outcome == "http_error" or error_body:
        return "the service would decline the booking and refund the client"
    if answer is None:
        return "the service would retry (a 2xx that breaks the rules counts as not delivered)"
    if _late(result, deadline):
        return "the service would retry (its first attempt times out)"
    return None


def _parsed(model: type[M], body: Any) -> M | None:
    try:
        return model.model_validate(body)
    except ValidationError:
        return None


def _unknown_types(body: Any) -> list[str]:
    out = []
    for i, vehicle in enumerate(body.get("vehicles", [])):
        if vehicle.get("type") not in REFERENCE_VEHICLE_TYPES:
            out.append(f"vehicles[{i}].type: {vehicle.get('type')!r} is not a reference vehicle type "
                       f"({', '.join(sorted(REFERENCE_VEHICLE_TYPES))})")
    return out[:3]


def _answered_amendment(body: Any) -> list[str]:
    """Success, or Error with a message for the client (a bare refusal tells the client nothing)."""
    if body.get("status") == "Error" and not str(body.get("message") or "").strip():
        return ['answered {"status":"Error"} without a message; the client is shown why the amendment was refused']
    return []


def _success(body: Any) -> list[str]:
    if body.get("status") != "Success":
        return [f"answered status {body.get('status')!r}{_message(body)}; expected \"Success\""]
    return []


async def run_conformance(base_url: str, *, token: str, secret: str, airport: Airport,
                          deadlines: Deadlines | None = None, client: PartnerClient | None = None,
                          now: datetime | None = None) -> Report:
    """Run every check against ``base_url``; the report says what passed. Never raises for a bad partner."""
    deadlines = deadlines or Deadlines()
    schemas = contract_schemas()
    endpoint = PartnerEndpoint(0, "conformance-check", base_url, token, secret)
    own_client = client is None
    http = client or PartnerClient()
    marker = request_id_var.set(f"partner-check-{uuid.uuid4().hex[:12]}")
    run = ConformanceRun(http, endpoint, airport, deadlines, schemas, now=now)
    try:
        checks = await run.run()
    finally:
        request_id_var.reset(marker)
        if own_client:
            await http.aclose()
    report = Report(base_url, airport.iata, checks, reservation_no=run.reservation_no)
    if schemas.unavailable:
        report.warnings.append(schemas.unavailable)
    return report
