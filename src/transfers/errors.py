"""The error vocabulary of the service, free of HTTP.

Two families, matching the two error-body shapes of SPEC.md section 7 and DECISIONS.md section 3:

* ``SpecError``: a field-validation or business-rule failure named by an integer code of the spec's
  tables (``{"status":"Error","code":1002,"message":"SEARCH_NOT_EXISTS"}``, HTTP 422).
* ``ServiceError``: everything else, named by a string code with a human message
  (``{"status":"Error","code":"UNAUTHENTICATED","message":"..."}``) and an HTTP status.

``PartnerApiError`` is the reverse API's own shape (``{"status":"Error","message":...}``).
The HTTP layer renders all three in one place (``transfers.api.errors``).
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    """Integer error codes. The member name is the ``message`` the contract requires."""

    # SPEC.md 7.2 create booking, in table order (1100 is checked first, see DECISIONS 5)
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
    CREATION_PERMISSION_DENIED = 1100
    WALLET_BALANCE_INSUFFICIENT = 1101  # DECISIONS 2
    # SPEC.md 7.4 cancel booking
    CANCELLATION_RESERVATION_REQUIRED = 1200
    CANCELLATION_RESERVATION_NOT_FOUND = 1201
    CANCELLATION_TYPE_REQUIRED = 1202
    CANCELLATION_TYPE_INVALID = 1203
    CANCELLATION_FAILED = 1204
    CANCELLATION_PERMISSION_DENIED = 1205  # DECISIONS 2
    # SPEC.md 7.1 search
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
    # SPEC.md 7.3 get booking
    BOOKING_INFO_RESERVATION_REQUIRED = 1400
    BOOKING_INFO_RESERVATION_NOT_FOUND = 1401


class SpecError(Exception):
    """A failure named by an integer code of the spec (rendered as HTTP 422)."""

    def __init__(self, code: Code) -> None:
        super().__init__(code.name)
        self.code = code


class ServiceError(Exception):
    """A failure that is not a field validation: string code, human message, HTTP status."""

    def __init__(
        self,
        http_status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.code = code
        self.message = message
        self.headers = headers or {}


class PartnerApiError(Exception):
    """A reverse-API failure: ``{"status":"Error","message":...}`` (404 body adds data/error_details)."""

    def __init__(self, http_status: int, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.message = message


def unauthenticated(message: str = "A valid bearer API key is required.") -> ServiceError:
    return ServiceError(401, "UNAUTHENTICATED", message,
                        {"WWW-Authenticate": 'Bearer realm="transfers"'})  # RFC 9110 11.6.1


def client_suspended() -> ServiceError:
    return ServiceError(403, "CLIENT_SUSPENDED", "This client account is suspended.")


def malformed_json(detail: str = "The request body must be a JSON object.") -> ServiceError:
    return ServiceError(400, "MALFORMED_JSON", detail)


def unavailable() -> ServiceError:
    return ServiceError(
        503, "UNAVAILABLE", "The service cannot reach its database; retry shortly.", {"Retry-After": "5"}
    )
