"""Python SDK of the transfers booking API: typed answers, typed errors, safe retries.

    from transfers_sdk import Airport, Point, TransfersClient

    with TransfersClient("http://127.0.0.1:8000", api_key) as api:
        found = api.search(pickup_datetime="2026-12-01 14:30", pickup=Airport("LHR"),
                           dropoff=Point(51.508, -0.128, "Trafalgar Square"), adult=2)
        booking = api.create_booking(found.search_id, found.vehicles[0].vehicle_id,
                                     passenger={"name": "Ada", "surname": "Lovelace",
                                                "phone": "+447911123456", "email": "ada@example.com"},
                                     travel_details={"flight_number": "BA117"})
        booking = api.wait_until_approved(booking.reservation_no)  # paced by the service's Retry-After

``wait_until_approved`` suits scripts and demos; a service in production is better told by a webhook
endpoint (``create_webhook_endpoint``, ``verify_webhook``) than polled.

``AsyncTransfersClient`` has the same methods as coroutines. It is its own distribution
(``pip install ./sdk`` from the repository, ``transfers-sdk``) and needs only ``httpx`` and the
standard library: no web framework, no database driver, not the server.

Retries: network failures (``httpx.TransportError``), 5xx and 429 are retried up to
``max_retries`` times (default 3) with exponential backoff and jitter, or after ``Retry-After``
when the service sends one. Create, cancel and amend always carry an ``Idempotency-Key`` (a fresh UUID
unless you pass one) and every retry re-sends the same key and the same bytes, so a retry is
answered with the first outcome and can never book or cancel twice. Other 4xx are never retried.

Errors::

    TransfersError                      base of everything raised (.idempotency_key on create/cancel)
    ├── ValidationFailed                422 {"code": <int>}: .code (1002), .name ("SEARCH_NOT_EXISTS")
    ├── ApiError                        {"code": "<STRING>"}: .http_status .code .message .request_id
    │   ├── AuthenticationError         401 UNAUTHENTICATED
    │   ├── ClientSuspended             403 CLIENT_SUSPENDED
    │   ├── IdempotencyConflict         409 IDEMPOTENCY_KEY_IN_USE, 422 IDEMPOTENCY_KEY_REUSED
    │   ├── AmendmentInProgress         409 AMENDMENT_IN_PROGRESS: the previous amendment still waits
    │   ├── InvalidRequest              400/404/405/413/422 string codes: the request itself is wrong
    │   ├── RateLimited                 429 RATE_LIMITED (after retries): .retry_after
    │   └── ServerError                 5xx INTERNAL_ERROR, UNAVAILABLE (after retries)
    ├── NetworkError                    unreachable / timed out (after retries); __cause__ is httpx's
    ├── UnexpectedResponse              a 2xx whose body is not the documented shape
    ├── WaitTimedOut (also TimeoutError) wait_until_approved's timeout; .booking is the last read
    └── WebhookVerificationError        verify_webhook: not signed by your secret, or a stale timestamp

Receiving webhooks: ``verify_webhook(raw_body, headers, secret)`` answers a typed event
(``BookingEvent`` with ``.booking``, ``.sequence``, ``.previous_status``; ``PingEvent``);
see ``transfers_sdk.webhooks``.
"""

from transfers_sdk._calls import RetryPolicy
from transfers_sdk._version import __version__
from transfers_sdk.accounts import (
    Wallet,
    WalletBalance,
    WalletEntry,
    WalletEntryPage,
    WebhookDelivery,
    WebhookDeliveryPage,
    WebhookEndpoint,
)
from transfers_sdk.client import AsyncTransfersClient, TransfersClient
from transfers_sdk.errors import (
    AmendmentInProgress,
    ApiError,
    AuthenticationError,
    ClientSuspended,
    IdempotencyConflict,
    InvalidRequest,
    NetworkError,
    RateLimited,
    ServerError,
    TransfersError,
    UnexpectedResponse,
    ValidationFailed,
    WaitTimedOut,
)
from transfers_sdk.incidents import Incident, IncidentResolution
from transfers_sdk.messages import TravellerMessage
from transfers_sdk.models import (
    Airport,
    Amendment,
    BookedVehicle,
    Booking,
    BookingPage,
    BookingStatus,
    Cancellation,
    CancellationPolicy,
    CancellationQuote,
    CancellationReason,
    Driver,
    ExtraService,
    Flight,
    Fx,
    Passenger,
    Passengers,
    Place,
    Point,
    PolicyTier,
    Price,
    Ride,
    RideEvent,
    RidePosition,
    SearchResult,
    TripLeg,
    Vehicle,
    VehicleQuality,
)
from transfers_sdk.ratings import Rating
from transfers_sdk.webhooks import (
    EVENT_TYPES,
    BookingEvent,
    DriverPositionEvent,
    PingEvent,
    WebhookEvent,
    WebhookVerificationError,
    parse_event,
    verify_webhook,
)

__all__ = [
    "EVENT_TYPES",
    "Airport",
    "Amendment",
    "AmendmentInProgress",
    "ApiError",
    "AsyncTransfersClient",
    "AuthenticationError",
    "BookedVehicle",
    "Booking",
    "BookingEvent",
    "BookingPage",
    "BookingStatus",
    "Cancellation",
    "CancellationPolicy",
    "CancellationQuote",
    "CancellationReason",
    "ClientSuspended",
    "Driver",
    "DriverPositionEvent",
    "ExtraService",
    "Flight",
    "Fx",
    "IdempotencyConflict",
    "Incident",
    "IncidentResolution",
    "InvalidRequest",
    "NetworkError",
    "Passenger",
    "Passengers",
    "PingEvent",
    "Place",
    "Point",
    "PolicyTier",
    "Price",
    "RateLimited",
    "Rating",
    "RetryPolicy",
    "Ride",
    "RideEvent",
    "RidePosition",
    "SearchResult",
    "ServerError",
    "TransfersClient",
    "TransfersError",
    "TravellerMessage",
    "TripLeg",
    "UnexpectedResponse",
    "ValidationFailed",
    "Vehicle",
    "VehicleQuality",
    "WaitTimedOut",
    "Wallet",
    "WalletBalance",
    "WalletEntry",
    "WalletEntryPage",
    "WebhookDelivery",
    "WebhookDeliveryPage",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "parse_event",
    "verify_webhook",
]
