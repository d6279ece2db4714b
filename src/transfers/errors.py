"""The one domain error tree of the service, free of HTTP, HTML and exit codes.

Every failure a use case reports is a ``DomainError`` with one of five meanings; the surfaces
render it, each in one place: the API (``transfers.api.errors.render``: the envelopes and HTTP
statuses of docs/rules/errors.md#shapes), the console and the partner portal (``transfers.webauth.site``:
HTML error pages) and the CLI (``transfers.cli.errors``: ``error: ...`` lines and exit codes)::

    DomainError                 message, code (SPEC ``Code`` | ``ErrorCode`` | None), headers
    |-- NotFound                no such thing for this caller         API 404 / 422 with a SPEC code, page 404, exit 1
    |-- Refused                 not allowed: this caller, this state  API 401/403/422/429, page 403, exit 1
    |-- Conflict                someone else changed it, or in use    API 409, page 409, exit 1
    |-- Invalid                 the input breaks a rule               API 400/413/422, page 422, exit 1 (settings: 2)
    `-- Unavailable             the database or Redis cannot serve    API 503, page 503, exit 69

Each package raises its own subclasses (``bookings.lifecycle.ConcurrentChange(Conflict)``,
``bookings.state.TransitionRefused(Refused)``, ``partners.service.PartnerNotFound(NotFound)``...);
``tests/unit/test_error_tree.py`` checks that the domain packages raise nothing else and that no two
exception classes of ``transfers`` share a name.

The ``code`` names the contract's error when the API answers it:

* a ``Code``: a field-validation or business-rule failure named by an integer code of
  docs/rules/errors.md#search-codes and the sections after it
  (``{"status":"Error","code":1002,"message":"SEARCH_NOT_EXISTS"}``, HTTP 422), whatever its meaning
  (1201 is a ``NotFound``, 1205 a ``Refused``, most are ``Invalid``);
* an ``ErrorCode``: a string code of the one table below (docs/rules/errors.md#string-codes) with a
  human message (``{"status":"Error","code":"UNAUTHENTICATED","message":"..."}``) and that code's
  HTTP status;
* None: an error of the reverse API, whose own shape (``{"status":"Error","message":...}``,
  docs/rules/partners.md#reverse-api) answers a ``NotFound`` 404, a ``Conflict`` 409 and the others 422, or an error
  only the console, portal or CLI meet.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Code(IntEnum):
    """Integer error codes. The member name is the ``message`` the contract requires."""

    # docs/rules/errors.md#create-codes create booking, in table order (1100 is checked first, see
    # docs/rules/booking.md)
    SEARCH_ID_REQUIRED = 1001
    SEARCH_NOT_EXISTS = 1002
    VEHICLE_ID_REQUIRED = 1003
    VEHICLE_ID_INVALID = 1004
    PASSENGER_REQUIRED = 1005
    PASSENGER_NAME_REQUIRED = 1006
    PASSENGER_SURNAME_REQUIRED = 1007
    PASSENGER_PHONE_REQUIRED = 1008
    PASSENGER_PHONE_INVALID = 1009
    PASSENGER_EMAIL_REQUIRED = 1010
    PASSENGER_EMAIL_INVALID = 1011
    TRAVEL_DETAILS_REQUIRED = 1012
    FLIGHT_NUMBER_REQUIRED = 1013
    SUITCASE_REQUIRED = 1014
    SUITCASE_INVALID = 1015
    SMALL_BAGS_REQUIRED = 1016
    SMALL_BAGS_INVALID = 1017
    EXTRA_SERVICES_INVALID = 1018
    EXTRA_SERVICE_ID_REQUIRED = 1019
    EXTRA_SERVICE_ID_INVALID = 1020
    EXTRA_SERVICE_QUANTITY_INVALID = 1021
    RETURN_VEHICLE_ID_INVALID = 1022  # docs/rules/return-trips.md#create
    MESSAGES_INVALID = 1023  # docs/rules/messages.md#settings: the create's ``messages`` switches
    CREATION_PERMISSION_DENIED = 1100
    WALLET_BALANCE_INSUFFICIENT = 1101  # docs/rules/accounts.md#payment
    # docs/rules/errors.md#cancel-codes cancel booking
    CANCELLATION_RESERVATION_REQUIRED = 1200
    CANCELLATION_RESERVATION_NOT_FOUND = 1201
    CANCELLATION_TYPE_REQUIRED = 1202
    CANCELLATION_TYPE_INVALID = 1203
    CANCELLATION_FAILED = 1204
    CANCELLATION_PERMISSION_DENIED = 1205  # docs/rules/accounts.md#permissions
    # docs/rules/errors.md#search-codes search
    SEARCH_PICKUP_LOCATION_REQUIRED = 1300
    SEARCH_PICKUP_LOCATION_TYPE_REQUIRED = 1301
    SEARCH_PICKUP_LOCATION_TYPE_INVALID = 1302
    SEARCH_DROPOFF_LOCATION_REQUIRED = 1303
    SEARCH_DROPOFF_LOCATION_TYPE_REQUIRED = 1304
    SEARCH_DROPOFF_LOCATION_TYPE_INVALID = 1305
    SEARCH_PICKUP_IATA_CODE_REQUIRED = 1306
    SEARCH_PICKUP_IATA_CODE_INVALID = 1307
    SEARCH_DROPOFF_IATA_CODE_REQUIRED = 1308
    SEARCH_DROPOFF_IATA_CODE_INVALID = 1309
    SEARCH_PICKUP_LAT_REQUIRED = 1310
    SEARCH_PICKUP_LNG_REQUIRED = 1311
    SEARCH_PICKUP_NAME_REQUIRED = 1312
    SEARCH_DROPOFF_LAT_REQUIRED = 1313
    SEARCH_DROPOFF_LNG_REQUIRED = 1314
    SEARCH_DROPOFF_NAME_REQUIRED = 1315
    SEARCH_PICKUP_DATETIME_REQUIRED = 1316
    SEARCH_PICKUP_DATETIME_INVALID = 1317
    SEARCH_TRAVELERS_REQUIRED = 1318
    SEARCH_TRAVELERS_ADULT_REQUIRED = 1319
    SEARCH_TRAVELERS_ADULT_INVALID = 1320
    SEARCH_TRAVELERS_CHILDREN_INVALID = 1321
    SEARCH_TRAVELERS_INFANT_INVALID = 1322
    SEARCH_AIRPORT_REQUIRED = 1323
    SEARCH_RETURN_DATETIME_INVALID = 1324  # docs/rules/return-trips.md#search (checked right after 1317)
    SEARCH_CURRENCY_INVALID = 1325  # docs/rules/fx.md#search (checked after 1324 and 1318-1323)
    SEARCH_SORT_INVALID = 1326  # docs/rules/quality.md#ranking (checked last)
    # docs/rules/errors.md#get-codes get booking
    BOOKING_INFO_RESERVATION_REQUIRED = 1400
    BOOKING_INFO_RESERVATION_NOT_FOUND = 1401


class ErrorCode(StrEnum):
    """The one table of string error codes (docs/rules/errors.md#shapes): code, HTTP status, default message.

    Every ``DomainError`` that names a string code is built from a member, the served OpenAPI document lists the members
    (``api/schemas.py``), and ``tests/unit/test_error_codes.py`` checks that the SDK's error mapping
    and docs/integrators/errors.md name exactly these codes. Adding a code (the console, webhooks, amendments and hosted
    partners added e.g. ``WEBHOOK_ENDPOINT_LIMIT``, ``INVALID_WEBHOOK_URL``, ``AMENDMENT_NOT_ALLOWED``) is three lines:

    1. a member here: ``NAME = "NAME", <http status>, "<default message>"``;
    2. its exception class in ``ERROR_CLASSES`` of ``sdk/src/transfers_sdk/errors.py``;
    3. its row in docs/integrators/errors.md.
    """

    http_status: int
    default_message: str

    def __new__(cls, code: str, http_status: int, default_message: str) -> ErrorCode:
        member = str.__new__(cls, code)
        member._value_ = code
        member.http_status = http_status
        member.default_message = default_message
        return member

    MALFORMED_JSON = "MALFORMED_JSON", 400, "The request body must be a JSON object."
    MALFORMED_REQUEST = "MALFORMED_REQUEST", 400, "The request is malformed."
    IDEMPOTENCY_KEY_INVALID = ("IDEMPOTENCY_KEY_INVALID", 400, "Idempotency-Key must be 1 to 255 printable characters.")
    UNAUTHENTICATED = "UNAUTHENTICATED", 401, "A valid bearer API key is required."
    CLIENT_SUSPENDED = "CLIENT_SUSPENDED", 403, "This client account is suspended."
    NOT_FOUND = "NOT_FOUND", 404, "No such path."
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED", 405, "This method is not allowed on this path."
    IDEMPOTENCY_KEY_IN_USE = "IDEMPOTENCY_KEY_IN_USE", 409, "A request with this Idempotency-Key is still running."
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE", 413, "The request body is too large."
    IDEMPOTENCY_KEY_REUSED = ("IDEMPOTENCY_KEY_REUSED", 422, "This Idempotency-Key was used with a different request.")
    INVALID_FILTER = "INVALID_FILTER", 422, "A filter of the booking list is invalid."
    INVALID_CURSOR = ("INVALID_CURSOR", 422, "The cursor is not one this service issued; start again without it.")
    RATE_LIMITED = "RATE_LIMITED", 429, "Too many requests for this API key."
    INTERNAL_ERROR = "INTERNAL_ERROR", 500, "Internal error."
    UNAVAILABLE = "UNAVAILABLE", 503, "The service cannot reach its database; retry shortly."
    # Any other status the web framework raises itself (none is known today); rendered with that status.
    HTTP_ERROR = "HTTP_ERROR", 400, "The request was refused."
    # the last seat of a hosted partner's vehicle on that local date went to another booking.
    VEHICLE_UNAVAILABLE = (
        "VEHICLE_UNAVAILABLE",
        409,
        "This vehicle is no longer available for that day; search again.",
    )
    # docs/rules/cancellation.md: amendments
    AMENDMENT_NOT_ALLOWED = (
        "AMENDMENT_NOT_ALLOWED",
        422,
        "This booking cannot be amended now: only PENDING_APPROVAL and APPROVED bookings, while cancelling is free.",
    )
    AMENDMENT_IN_PROGRESS = (
        "AMENDMENT_IN_PROGRESS",
        409,
        "An amendment of this booking is waiting for the partner's answer.",
    )
    FIELD_NOT_AMENDABLE = (
        "FIELD_NOT_AMENDABLE",
        422,
        "Route, party, vehicle, luggage and extras cannot be amended: cancel and book again.",
    )
    AMENDMENT_EMPTY = "AMENDMENT_EMPTY", 422, "The amendment changes nothing."
    # docs/rules/webhooks.md: webhook endpoints
    WEBHOOK_ENDPOINT_LIMIT = (
        "WEBHOOK_ENDPOINT_LIMIT",
        422,
        "A client has at most 10 webhook endpoints; delete one first.",
    )
    INVALID_WEBHOOK_URL = ("INVALID_WEBHOOK_URL", 422, "The webhook URL must be http(s) and reach a public address.")
    INVALID_WEBHOOK_EVENT = (
        "INVALID_WEBHOOK_EVENT",
        422,
        'events must be ["*"] or a non-empty list of known event types.',
    )
    INVALID_WEBHOOK_ENDPOINT = ("INVALID_WEBHOOK_ENDPOINT", 422, "A field of the webhook endpoint is invalid.")
    # docs/rules/incidents.md: incidents
    INCIDENT_NOT_ALLOWED = (
        "INCIDENT_NOT_ALLOWED",
        422,
        "An incident can be reported only for an APPROVED or COMPLETED booking, from its pickup time until 72 h after.",
    )
    # docs/rules/wallet.md#currencies: a currency the client holds no wallet in
    WALLET_NOT_FOUND = ("WALLET_NOT_FOUND", 404, "You hold no wallet in this currency.")
    INCIDENT_EXISTS = ("INCIDENT_EXISTS", 409, "An incident of this type was already reported for this booking.")
    INVALID_INCIDENT = (
        "INVALID_INCIDENT",
        422,
        "type must be DRIVER_NO_SHOW, DRIVER_LATE, WRONG_VEHICLE or OTHER; description 1..2000 characters.",
    )
    # docs/rules/ratings.md: the traveller's rating of a ride
    RATING_EXISTS = ("RATING_EXISTS", 409, "This ride was already rated.")
    RATING_NOT_ALLOWED = (
        "RATING_NOT_ALLOWED",
        422,
        "A ride can be rated from the drop-off until 7 days after it.",
    )
    INVALID_RATING = ("INVALID_RATING", 422, "stars must be a whole number 1..5; comment at most 1000 characters.")


Coded = Code | ErrorCode


class DomainError(Exception):
    """The root of every failure a use case reports (see the module's docstring for the tree).

    ``DomainError(what, message)``: ``what`` is a ``Code`` or an ``ErrorCode`` (the message defaults
    to the code's), or the message itself when the error has no code."""

    default_message = "Refused."

    def __init__(
        self, what: Coded | str | None = None, message: str | None = None, *, headers: dict[str, str] | None = None
    ) -> None:
        code: Coded | None
        if isinstance(what, Code | ErrorCode):
            code = what
            default = what.default_message if isinstance(what, ErrorCode) else what.name
        else:
            code = None
            default = what if what is not None else self.default_message
        text = default if message is None else message
        super().__init__(text)
        self.code = code
        self.message = text
        self.headers = headers or {}


class NotFound(DomainError):
    """No such thing, or not this caller's (which must look exactly the same)."""

    default_message = "There is no such thing."


class Refused(DomainError):
    """This caller may not do this, or not in the thing's present state: nothing was changed."""

    default_message = "Refused."


class Conflict(DomainError):
    """Another request changed the thing first, or holds it: nothing was changed; look again or retry."""

    default_message = "It changed meanwhile; nothing was done."


class Invalid(DomainError):
    """The input breaks a rule of the contract (a SPEC ``Code`` or an ``ErrorCode`` when the API answers it)."""

    default_message = "The input is invalid."


class Unavailable(DomainError):
    """Something the service needs cannot serve now (the database, Redis)."""

    default_message = "The service cannot do this now; retry shortly."


def unauthenticated(message: str | None = None) -> Refused:
    return Refused(
        ErrorCode.UNAUTHENTICATED, message, headers={"WWW-Authenticate": 'Bearer realm="transfers"'}
    )  # RFC 9110 11.6.1


def client_suspended() -> Refused:
    return Refused(ErrorCode.CLIENT_SUSPENDED)


def malformed_json(detail: str | None = None) -> Invalid:
    return Invalid(ErrorCode.MALFORMED_JSON, detail)


def unavailable() -> Unavailable:
    return Unavailable(ErrorCode.UNAVAILABLE, headers={"Retry-After": "5"})
