"""The partner webhook contract on the wire (PARTNER_API.md): what the service sends and accepts.

Partner answers are untrusted input. They are validated here, strictly: a malformed or lying
answer (negative or non-numeric price, more decimals than any currency has, missing fields, booleans for
numbers, oversized lists) fails validation and the partner is left out of that search, or the
delivery is counted as failed, instead of anything reaching a client or a wallet.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt
from pydantic_core import SchemaValidator, core_schema

from transfers import money, text
from transfers.cancellation import policy

BOOKING_TYPE = "ONEWAY"
# At most the decimals any currency has (money.STORED_PLACES: CLF's four): a KWD quote is 20.465, a JPY
# one 10010. The quote's own currency's rule (JPY none, EUR two) is the offer's (search.offers.build_offers:
# an amount with more decimals than its currency is left out, never rounded), where the currency is known.
_DECIMAL_TEXT = re.compile(rf"^\d{{1,9}}(\.\d{{1,{money.STORED_PLACES}}})?$")
MAX_PRICE = Decimal("1000000")


def _parse_price(value: Any) -> Decimal:
    """A positive amount with at most four decimals (the partner API's rule, docs/partners/index.md#search:
    at most its currency's decimals, checked where the currency is known), from a JSON number or a
    decimal string; kept as given (45.1 stays 45.1): the offer checks it against its currency's decimals
    and ``money.text`` writes it (``search.offers.build_offers``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("price must be a number or a decimal string")
    return _price(value)


@lru_cache(maxsize=4096, typed=True)
def _price(value: int | float | str) -> Decimal:
    """``_parse_price``'s work, remembered per value and type (``1``, ``1.0`` and ``"1"`` apart): a
    search validates every vehicle's and extra's price, and partners quote the same prices again and
    again. A refused value raises each time (exceptions are not cached); a Decimal is
    immutable, so sharing one is safe."""
    text = value if isinstance(value, str) else repr(value)
    if isinstance(value, float) and not value.is_integer():
        text = format(Decimal(repr(value)), "f")
    if isinstance(value, int | float) and float(value).is_integer():
        text = str(int(value))
    if not _DECIMAL_TEXT.match(text):
        raise ValueError("price must be a plain decimal with at most its currency's decimals (four at most)")
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise ValueError("price is not a decimal") from None
    if amount <= 0 or amount > MAX_PRICE:
        raise ValueError("price must be positive and below 1,000,000")
    return amount


Price = Annotated[Decimal, BeforeValidator(_parse_price)]


def _no_nul(value: Any) -> Any:
    # PostgreSQL text cannot hold NUL; a partner sending one is answering garbage.
    if isinstance(value, str) and "\x00" in value:
        raise ValueError("text may not contain NUL characters")
    return value


# Length limits come BEFORE the Python validators in every ``Annotated``: so they sit in the string
# schema and are checked by pydantic-core itself (errors ``string_too_short`` / ``string_too_long``).
# Placed after a ``BeforeValidator`` they become two Python callbacks per field, ~240 calls in a
# 10-partner search. The validators still run first, in the same order (outermost first).
NoNul = BeforeValidator(_no_nul)


def _clean(value: Any, *, multiline: bool) -> Any:
    """``value``, or ValueError naming the character ``transfers.text`` refuses (pydantic's validators
    raise ValueError; its message becomes the reverse API's 422 ``message``)."""
    found = text.refused_character(value, multiline=multiline) if isinstance(value, str) else None
    if found is not None:
        raise ValueError(f"may not contain {text.REFUSED} ({found})")
    return value


def _one_line(value: Any) -> Any:
    return _clean(value, multiline=False)


def _free_text(value: Any) -> Any:
    return _clean(value, multiline=True)


# docs/rules/booking.md#text: what a partner says of its driver reaches the traveller's page, the client
# and the console; no control characters or bidirectional overrides (``transfers.text``). Not on the
# search answers' fields: those are priced in bulk, and a partner's vehicle names reach no driver.
OneLine = BeforeValidator(_one_line)
FreeText = BeforeValidator(_free_text)
Text = Annotated[str, Field(min_length=1, max_length=200), NoNul]
Count = Annotated[StrictInt, Field(ge=0, le=100)]


class _Answer(BaseModel):
    # Partners may add fields; they are ignored (forward compatibility), never trusted.
    model_config = ConfigDict(extra="ignore", strict=False)


def _id_text(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


IdText = Annotated[str, Field(min_length=1, max_length=200), BeforeValidator(_id_text), NoNul]


class WireCapacity(_Answer):
    passengers: Annotated[StrictInt, Field(ge=1, le=100)]
    suitcases: Count
    small_bags: Count


class WireExtra(_Answer):
    id: IdText
    name: Text
    price: Price
    pricing_type: Literal["PER_BOOKING", "PER_ITEM"]


def _policy(value: Any) -> Any:
    """A per-vehicle cancellation policy (docs/rules/cancellation.md): well-formed by ``cancellation.policy``'s
    rules, kept in its normal form (tiers by hours, descending). A malformed one fails the answer,
    which leaves the partner out of the search like any malformed answer."""
    return None if value is None else policy.from_json(value).public()


WirePolicy = Annotated[Any, BeforeValidator(_policy)]


class WireVehicle(_Answer):
    id: IdText
    make: Text
    model: Text
    type: Text
    price: Price
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    capacity: WireCapacity
    extras: Annotated[list[WireExtra], Field(max_length=20)] = []
    cancellation_policy: WirePolicy = None  # None: the partner's default policy


class WireSearchAnswer(_Answer):
    distance_km: Annotated[StrictInt, Field(ge=0, le=20000)] | None = None
    vehicles: list[WireVehicle]


class WireDriver(_Answer):
    name: Annotated[str, Field(min_length=1, max_length=200), OneLine]
    phone: Annotated[str, Field(min_length=3, max_length=32), OneLine]
    plate: Annotated[str, Field(min_length=1, max_length=32), OneLine]


class WireCreateAnswer(_Answer):
    reservation_no: IdText | None = None  # the partner's own reference
    status: Literal["PENDING", "APPROVED", "DECLINED"]
    driver_info: WireDriver | None = None
    meeting_point: Annotated[str, Field(max_length=1000), FreeText] | None = None
    message: Annotated[str, Field(max_length=1000), NoNul] | None = None


class WireInfoAnswer(_Answer):
    reservation_no: IdText | None = None
    status: Literal["PENDING", "PENDING_APPROVAL", "APPROVED", "CANCELLED", "DECLINED", "COMPLETED"]
    driver_info: WireDriver | None = None
    meeting_point: Annotated[str, Field(max_length=1000), FreeText] | None = None


class WireResult(_Answer):
    status: Literal["Success", "Error"]
    message: Annotated[str, Field(max_length=1000), NoNul] = ""


def location_payload(location: dict[str, Any]) -> dict[str, Any]:
    """A stored search location as partners receive it (airports carry name and coordinates)."""
    return {k: location[k] for k in ("type", "iata_code", "name", "lat", "lng") if k in location}


def search_request(
    *, pickup: dict[str, Any], dropoff: dict[str, Any], date: str, adult: int, children: int, infant: int
) -> dict[str, Any]:
    return {
        "booking_type": BOOKING_TYPE,
        "from": location_payload(pickup),
        "to": location_payload(dropoff),
        "date": date,
        "passengers": {"adult": adult, "children": children, "infant": infant},
    }


# The search answer's validator for the fan-out (docs/operations/performance-history.md#search-seventh-pass): the same
# schema as ``WireSearchAnswer``, with its Python callbacks done by pydantic-core where that is exact,
# and the NUL checks left out, which is only right for an answer whose bytes hold no ``\u0000``
# (``search.fanout.validated`` checks the bytes and takes the model for any other answer). Measured
# per bench answer (two vehicles, two extras, 122 k instructions with orjson's parse): a text's callback
# ~1 k, a price's ~5 k, ``model_validate``'s own Python ~4.6 k. Equal to the model for every value orjson
# can give (tests/unit/test_search_answer_fast.py: the same instances, or the same errors and texts).
_PRICE_TYPES = core_schema.union_schema(
    # ``_parse_price``'s type check: int, float and str, never bool (strict int refuses it), with its error
    [core_schema.str_schema(strict=True), core_schema.int_schema(strict=True), core_schema.float_schema(strict=True)],
    mode="left_to_right",
    custom_error_type="value_error",
    # the exception itself, as a ValueError from ``_parse_price`` leaves it in the error's context
    custom_error_context={"error": ValueError("price must be a number or a decimal string")},  # type: ignore[dict-item]
)
_ID_TYPES = core_schema.union_schema(
    # ``_id_text``: a str as it is, an int (not a bool) as its decimal text; anything else refused as not a str
    [
        core_schema.str_schema(),
        core_schema.chain_schema(
            [core_schema.int_schema(strict=True), core_schema.str_schema(coerce_numbers_to_str=True)]
        ),
    ],
    mode="left_to_right",
    custom_error_type="string_type",
)


def _in_core(schema: Any) -> Any:
    """``schema`` with ``_no_nul`` dropped and ``_id_text``, ``_parse_price`` and ``_policy``'s None done
    by pydantic-core: a ``function-before`` is a Python call per field and value. The price's
    ``decimal`` step goes too: it returns the Decimal ``_price`` made, unchanged."""
    if isinstance(schema, list):
        return [_in_core(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    function = schema["function"].get("function") if schema.get("type") == "function-before" else None
    if function is _no_nul:
        return _in_core(schema["schema"])
    if function is _id_text:
        return core_schema.chain_schema([_ID_TYPES, _in_core(schema["schema"])])
    if function is _parse_price:  # ``_price`` is the lru_cache wrapper: a hit costs no Python frame
        return core_schema.chain_schema([_PRICE_TYPES, core_schema.no_info_plain_validator_function(_price)])
    if function is _policy:  # None is the default policy: no call for it
        return core_schema.nullable_schema(schema)
    return {key: _in_core(value) for key, value in schema.items()}


# ``_use_prebuilt=False``: else pydantic-core reuses each nested model's own validator (with its callbacks).
NUL_FREE_SEARCH_ANSWER = SchemaValidator(_in_core(WireSearchAnswer.__pydantic_core_schema__), _use_prebuilt=False)
