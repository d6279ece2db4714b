"""The API's refusals beside the form fields that can fix them (docs/rules/agency-portal.md#same-use-cases):
a page calls the API's use case, and the ``DomainError`` it raises carries the API's code; here it
becomes the field's message in words followed by the API's own message and code, so an agent and
an integrator read the same rule ("Choose a pickup time ... (API: SEARCH_PICKUP_DATETIME_INVALID,
1317)"). Pure."""

from __future__ import annotations

from transfers.errors import Code, DomainError, ErrorCode

GENERAL = "general"

# code -> (field, words)
_FIELDS: dict[Code, tuple[str, str]] = {
    Code.SEARCH_PICKUP_IATA_CODE_REQUIRED: ("airport", "Enter the airport's three-letter code, like LHR."),
    Code.SEARCH_PICKUP_IATA_CODE_INVALID: ("airport", "No airport the service knows has this code."),
    Code.SEARCH_DROPOFF_LAT_REQUIRED: ("lat", "Enter a latitude between -90 and 90, like 51.5074."),
    Code.SEARCH_DROPOFF_LNG_REQUIRED: ("lng", "Enter a longitude between -180 and 180, like -0.1278."),
    Code.SEARCH_DROPOFF_NAME_REQUIRED: ("place", "Enter the destination's name (at most 255 characters)."),
    Code.SEARCH_DROPOFF_IATA_CODE_REQUIRED: ("airport", "Enter the airport's three-letter code, like LHR."),
    Code.SEARCH_DROPOFF_IATA_CODE_INVALID: ("airport", "No airport the service knows has this code."),
    Code.SEARCH_PICKUP_LAT_REQUIRED: ("lat", "Enter a latitude between -90 and 90, like 51.5074."),
    Code.SEARCH_PICKUP_LNG_REQUIRED: ("lng", "Enter a longitude between -180 and 180, like -0.1278."),
    Code.SEARCH_PICKUP_NAME_REQUIRED: ("place", "Enter the place's name (at most 255 characters)."),
    Code.SEARCH_PICKUP_DATETIME_REQUIRED: ("pickup_date", "Enter the pickup date and time."),
    Code.SEARCH_PICKUP_DATETIME_INVALID: (
        "pickup_date",
        "Choose a pickup date and time, at the airport, at least {lead} from now and at most {ahead} days ahead.",
    ),
    Code.SEARCH_RETURN_DATETIME_INVALID: (
        "return_date",
        "Choose a way back at least an hour after the pickup and at most {ahead} days ahead, at the airport's clock.",
    ),
    Code.SEARCH_TRAVELERS_REQUIRED: ("adult", "Enter the number of travellers."),
    Code.SEARCH_TRAVELERS_ADULT_REQUIRED: ("adult", "Enter the number of adults."),
    Code.SEARCH_TRAVELERS_ADULT_INVALID: ("adult", "Enter a whole number of adults, from 1 to {most}."),
    Code.SEARCH_TRAVELERS_CHILDREN_INVALID: ("children", "Enter a whole number of children, from 0 to {most}."),
    Code.SEARCH_TRAVELERS_INFANT_INVALID: ("infant", "Enter a whole number of infants, from 0 to {most}."),
    Code.SEARCH_AIRPORT_REQUIRED: ("airport", "A transfer goes from an airport to a place."),
    Code.SEARCH_CURRENCY_INVALID: ("currency", "Choose one of your agency's wallets' currencies."),
    Code.SEARCH_SORT_INVALID: (GENERAL, "Sort the offers by price or as recommended."),
    Code.SEARCH_ID_REQUIRED: (GENERAL, "These offers have expired: search again."),
    Code.SEARCH_NOT_EXISTS: (GENERAL, "These offers have expired: search again."),
    Code.VEHICLE_ID_REQUIRED: (GENERAL, "Choose one of the offers."),
    Code.VEHICLE_ID_INVALID: (GENERAL, "This offer is not in the search any more: search again."),
    Code.RETURN_VEHICLE_ID_INVALID: (GENERAL, "This way back is not in the search any more: search again."),
    Code.MESSAGES_INVALID: (GENERAL, "Choose which messages go to the traveller: e-mail and SMS, on or off."),
    Code.EXTRA_SERVICES_INVALID: ("extras", "Choose each extra once, from this vehicle's list."),
    Code.EXTRA_SERVICE_ID_REQUIRED: ("extras", "Choose the extras from this vehicle's list."),
    Code.EXTRA_SERVICE_ID_INVALID: ("extras", "This vehicle does not offer that extra: search again."),
    Code.EXTRA_SERVICE_QUANTITY_INVALID: ("extras", "Enter each extra's quantity as a whole number, 1 or more."),
    Code.PASSENGER_REQUIRED: ("name", "Enter the passenger."),
    Code.PASSENGER_NAME_REQUIRED: ("name", "Enter the passenger's first name."),
    Code.PASSENGER_SURNAME_REQUIRED: ("surname", "Enter the passenger's surname."),
    Code.PASSENGER_PHONE_REQUIRED: ("phone", "Enter the passenger's phone number, with its country code."),
    Code.PASSENGER_PHONE_INVALID: ("phone", "Enter a phone number the driver can call, like +44 7911 123456."),
    Code.PASSENGER_EMAIL_REQUIRED: ("email", "Enter the passenger's e-mail address."),
    Code.PASSENGER_EMAIL_INVALID: ("email", "Enter an e-mail address like name@example.com."),
    Code.TRAVEL_DETAILS_REQUIRED: ("flight", "Enter the flight number."),
    Code.FLIGHT_NUMBER_REQUIRED: ("flight", "Enter the flight number, like BA117."),
    Code.SUITCASE_REQUIRED: ("suitcase", "Enter the number of suitcases."),
    Code.SUITCASE_INVALID: ("suitcase", "Enter a whole number of suitcases this vehicle takes."),
    Code.SMALL_BAGS_REQUIRED: ("small_bags", "Enter the number of small bags."),
    Code.SMALL_BAGS_INVALID: ("small_bags", "Enter a whole number of small bags this vehicle takes."),
    Code.CREATION_PERMISSION_DENIED: (GENERAL, "Your agency may not create bookings: ask the service's operators."),
    Code.WALLET_BALANCE_INSUFFICIENT: (GENERAL, "Your wallet's balance does not cover this price: top it up first."),
    Code.CANCELLATION_FAILED: (GENERAL, "This booking cannot be cancelled now."),
    Code.CANCELLATION_TYPE_REQUIRED: ("reason", "Choose the reason for cancelling."),
    Code.CANCELLATION_TYPE_INVALID: ("reason", "Choose one of the reasons in the list."),
    Code.CANCELLATION_RESERVATION_NOT_FOUND: (GENERAL, "There is no such booking in your agency."),
    Code.CANCELLATION_PERMISSION_DENIED: (GENERAL, "Your agency may not cancel bookings: ask the service's operators."),
}


def api_words(exc: DomainError) -> str:
    """The API's own message and code, as the API answers them."""
    code = exc.code
    if isinstance(code, Code):
        return f"(API: {code.name}, {code.value})"
    if isinstance(code, ErrorCode):
        return f"(API: {code.value})"
    return ""


def field_error(exc: DomainError, **values: object) -> tuple[str, str]:
    """(field, message) for a refusal; an error no field can fix goes to ``GENERAL`` (the summary).
    ``values`` fill the rule's numbers into the words (``{lead}``, ``{ahead}``, ``{most}``)."""
    code = exc.code
    known = _FIELDS.get(code) if isinstance(code, Code) else None
    if known is None:
        return GENERAL, f"{exc.message} {api_words(exc)}".strip() if code is not None else exc.message
    field, words = known
    try:
        words = words.format(**values)
    except (KeyError, IndexError, ValueError):
        words = known[1]
    return field, f"{words} {api_words(exc)}"
