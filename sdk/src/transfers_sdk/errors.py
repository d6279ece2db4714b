"""Every failure the SDK reports is a ``TransfersError``; see the package docstring for the tree."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class TransfersError(Exception):
    """Base of every error the SDK raises.

    ``idempotency_key``: on errors of ``create_booking`` and ``cancel_booking``, the key that was
    sent. When the outcome is unknown (``NetworkError``, ``ServerError``, ``IdempotencyConflict``
    409), repeating the call later with ``idempotency_key=exc.idempotency_key`` can never book or
    cancel twice.
    """

    idempotency_key: str | None = None


class ValidationFailed(TransfersError):
    """HTTP 422 with an integer code of the spec's tables, e.g. ``1002`` ``SEARCH_NOT_EXISTS``."""

    def __init__(self, code: int, name: str, *, http_status: int = 422, request_id: str | None = None) -> None:
        super().__init__(f"{code} {name}")
        self.code = code
        self.name = name
        self.message = name
        self.http_status = http_status
        self.request_id = request_id


class ApiError(TransfersError):
    """Any other error answer: ``{"status":"Error","code":"<STRING>","message":"<text>"}``."""

    def __init__(
        self,
        http_status: int,
        code: str,
        message: str,
        *,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"HTTP {http_status} {code}: {message}")
        self.http_status = http_status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after


class AuthenticationError(ApiError):
    """401 ``UNAUTHENTICATED``: missing, unknown or revoked API key."""


class ClientSuspended(ApiError):
    """403 ``CLIENT_SUSPENDED``: the key is valid but its client account is suspended."""


class IdempotencyConflict(ApiError):
    """409 ``IDEMPOTENCY_KEY_IN_USE`` (the first request with that key is still running: retry later
    with the same key) or 422 ``IDEMPOTENCY_KEY_REUSED`` (the key was used for another request)."""


class RateLimited(ApiError):
    """429 ``RATE_LIMITED`` once the SDK's retries are spent; ``retry_after`` is in seconds."""


class ServerError(ApiError):
    """5xx (``INTERNAL_ERROR``, ``UNAVAILABLE``, or a proxy's answer) once the SDK's retries are spent."""


class InvalidRequest(ApiError):
    """The request itself is wrong and will fail the same way again: 400 (``MALFORMED_JSON``,
    ``MALFORMED_REQUEST``, ``IDEMPOTENCY_KEY_INVALID``), 404 ``NOT_FOUND``, 405 ``METHOD_NOT_ALLOWED``,
    413 ``PAYLOAD_TOO_LARGE``, 422 ``INVALID_FILTER`` / ``INVALID_CURSOR``, or ``HTTP_ERROR``."""


class AmendmentInProgress(ApiError):
    """409 ``AMENDMENT_IN_PROGRESS``: the booking's previous amendment still waits for the partner;
    read the booking (``amendment.status``) and try again once it is ``APPLIED`` or ``REJECTED``."""


# The service's string codes (its ``ErrorCode`` table) -> the exception raised. A test fails when the
# service's table has a code this mapping lacks: adding a code to the service adds its line here.
ERROR_CLASSES: dict[str, type[ApiError]] = {
    "MALFORMED_JSON": InvalidRequest,
    "MALFORMED_REQUEST": InvalidRequest,
    "IDEMPOTENCY_KEY_INVALID": InvalidRequest,
    "UNAUTHENTICATED": AuthenticationError,
    "CLIENT_SUSPENDED": ClientSuspended,
    "NOT_FOUND": InvalidRequest,
    "METHOD_NOT_ALLOWED": InvalidRequest,
    "IDEMPOTENCY_KEY_IN_USE": IdempotencyConflict,
    "PAYLOAD_TOO_LARGE": InvalidRequest,
    "IDEMPOTENCY_KEY_REUSED": IdempotencyConflict,
    "INVALID_FILTER": InvalidRequest,
    "INVALID_CURSOR": InvalidRequest,
    "RATE_LIMITED": RateLimited,
    "INTERNAL_ERROR": ServerError,
    "UNAVAILABLE": ServerError,
    "HTTP_ERROR": InvalidRequest,
    "VEHICLE_UNAVAILABLE": InvalidRequest,
    "AMENDMENT_NOT_ALLOWED": InvalidRequest,
    "AMENDMENT_IN_PROGRESS": AmendmentInProgress,
    "FIELD_NOT_AMENDABLE": InvalidRequest,
    "AMENDMENT_EMPTY": InvalidRequest,
    "WEBHOOK_ENDPOINT_LIMIT": InvalidRequest,
    "INVALID_WEBHOOK_URL": InvalidRequest,
    "INVALID_WEBHOOK_EVENT": InvalidRequest,
    "INVALID_WEBHOOK_ENDPOINT": InvalidRequest,
    "INCIDENT_NOT_ALLOWED": InvalidRequest,
    "WALLET_NOT_FOUND": InvalidRequest,
    "INCIDENT_EXISTS": InvalidRequest,
    "INVALID_INCIDENT": InvalidRequest,
    "RATING_EXISTS": InvalidRequest,
    "RATING_NOT_ALLOWED": InvalidRequest,
    "INVALID_RATING": InvalidRequest,
}


class NetworkError(TransfersError):
    """The service could not be reached (connection, timeout, protocol) once the retries are spent.
    The ``httpx`` exception is the ``__cause__``."""


class UnexpectedResponse(TransfersError):
    """A success answer whose body is not the documented shape (e.g. a proxy's HTML page)."""

    def __init__(self, message: str, *, http_status: int, request_id: str | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.request_id = request_id


class WaitTimedOut(TransfersError, TimeoutError):
    """``wait_until_approved`` reached its ``timeout``; ``booking`` is the last state read."""

    def __init__(self, message: str, booking: Any) -> None:
        super().__init__(message)
        self.booking = booking


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), ``None`` if absent or bad."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def error_from_response(response: httpx.Response) -> TransfersError:
    """The typed exception for an error answer (any status >= 400)."""
    status = response.status_code
    request_id = response.headers.get("x-request-id")
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    try:
        body = response.json()
    except ValueError:
        body = None
    code: Any = body.get("code") if isinstance(body, dict) else None
    message: Any = body.get("message") if isinstance(body, dict) else None
    if isinstance(code, int) and not isinstance(code, bool):
        return ValidationFailed(code, str(message or ""), http_status=status, request_id=request_id)
    if not isinstance(code, str):
        code = f"HTTP_{status}"
    if not isinstance(message, str):
        message = response.reason_phrase or f"HTTP {status}"
    cls = ERROR_CLASSES.get(code) or _class_by_status(status)
    return cls(status, code, message, request_id=request_id, retry_after=retry_after)


def _class_by_status(status: int) -> type[ApiError]:
    """An answer without a known code (a proxy's page, a newer service's code): by its status."""
    cls: type[ApiError] = ApiError
    if status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = ClientSuspended
    elif status == 409:
        cls = IdempotencyConflict
    elif status == 429:
        cls = RateLimited
    elif status >= 500:
        cls = ServerError
    return cls
