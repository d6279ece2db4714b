"""Create and cancel rules without HTTP or SQL: validate_create, vehicle_number, reason_id, clean_note."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from transfers.bookings.rules import (
    ChosenExtra,
    Offer,
    OfferedExtra,
    check_search_id,
    clean_note,
    reason_id,
    validate_create,
    vehicle_number,
)
from transfers.errors import Code, DomainError

DROP = object()  # marker: remove the field
SEAT = OfferedExtra(7, "child-seat", "Child seat", "PER_ITEM", Decimal("4.50"), Decimal("5.00"))
MEET = OfferedExtra(8, "meet", "Meet & greet", "PER_BOOKING", Decimal("10.00"), Decimal("12.50"))
OFFER = Offer(
    vehicle_no=1,
    partner_id=3,
    partner_vehicle_id="v-1",
    make="Skoda",
    model="Octavia",
    type="Sedan",
    max_passengers=4,
    suitcases=2,
    small_bags=1,
    net_price=Decimal("36.00"),
    sell_price=Decimal("40.00"),
    currency="EUR",
    extras=(SEAT, MEET),
)
BODY: dict[str, Any] = {
    "search_id": "s_abc",
    "vehicle_id": "1",
    "suitcase": 2,
    "small_bags": 0,
    "passenger": {"name": " Ada ", "surname": "Lovelace", "phone": "+447911123456", "email": "Ada@Example.COM"},
    "travel_details": {"flight_number": " BA117 ", "extra_requests": "  window seat  "},
}


def body(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BODY)
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = out
        for key in parents:
            node = node[key]
        if value is DROP:
            node.pop(last, None)
        else:
            node[last] = value
    return out


def code_of(b: dict[str, Any], *, search_found: bool = True, offer: Offer | None = OFFER) -> int:
    with pytest.raises(DomainError) as raised:
        validate_create(b, search_found=search_found, offer=offer)
    return int(raised.value.code)


def test_a_valid_request_is_cleaned_and_priced() -> None:
    request = validate_create(BODY, search_found=True, offer=OFFER)
    assert (request.name, request.surname, request.phone) == ("Ada", "Lovelace", "+447911123456")
    assert request.email == "Ada@example.com"  # the domain is normalised, the local part kept
    assert (request.flight_number, request.extra_requests) == ("BA117", "window seat")
    assert (request.suitcase, request.small_bags, request.extras) == (2, 0, [])
    assert (request.total, request.net_total) == (Decimal("40.00"), Decimal("36.00"))


@pytest.mark.parametrize(
    ("extras", "total", "net", "labels"),
    [
        ([{"id": 8, "quantity": 5}], "52.50", "46.00", ["Meet & greet"]),
        ([{"id": 8}], "52.50", "46.00", ["Meet & greet"]),
        ([{"id": 7, "quantity": 3}], "55.00", "49.50", ["Child seat x 3"]),
        ([{"id": 7, "quantity": 1}], "45.00", "40.50", ["Child seat"]),
        ([{"id": 7, "quantity": None}], "45.00", "40.50", ["Child seat"]),
        (
            [{"id": 7, "quantity": 20}, {"id": 8, "quantity": 20}],
            "152.50",
            "136.00",
            ["Child seat x 20", "Meet & greet"],
        ),
        ([{"id": 8, "quantity": 2}, {"id": 7, "quantity": 2}], "62.50", "55.00", ["Meet & greet", "Child seat x 2"]),
        ([], "40.00", "36.00", []),
        (None, "40.00", "36.00", []),
    ],
)
def test_extras_are_charged_by_pricing_type(extras: Any, total: str, net: str, labels: list[str]) -> None:
    request = validate_create(body(extra_services=extras), search_found=True, offer=OFFER)
    assert (request.total, request.net_total) == (Decimal(total), Decimal(net))
    assert [c.label for c in request.extras] == labels
    assert all(isinstance(c, ChosenExtra) for c in request.extras)


def test_charged_units() -> None:
    assert ChosenExtra(SEAT, 4).charged_units == 4
    assert ChosenExtra(MEET, 4).charged_units == 1
    assert ChosenExtra(MEET, 4).label == "Meet & greet"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"vehicle_id": DROP}, 1003),
        ({"vehicle_id": None}, 1003),
        ({"passenger": DROP}, 1005),
        ({"passenger": "Ada"}, 1005),
        ({"passenger": []}, 1005),
        ({"passenger__name": None}, 1006),
        ({"passenger__name": " "}, 1006),
        ({"passenger__name": "x" * 201}, 1006),
        ({"passenger__name": "a\x00"}, 1006),
        ({"passenger__name": 1}, 1006),
        ({"passenger__surname": DROP}, 1007),
        ({"passenger__surname": ""}, 1007),
        ({"passenger__phone": DROP}, 1008),
        ({"passenger__phone": ""}, 1008),
        ({"passenger__phone": "+4479"}, 1009),
        ({"passenger__phone": "447911123456"}, 1009),
        ({"passenger__phone": "+447700900123"}, 1009),
        ({"passenger__phone": "+4４7911123456"}, 1009),
        ({"passenger__phone": "+44791112345٦"}, 1009),
        ({"passenger__phone": 447911123456}, 1009),
        ({"passenger__phone": "+1234567890123456"}, 1009),
        ({"passenger__email": None}, 1010),
        ({"passenger__email": ""}, 1010),
        ({"passenger__email": "ada"}, 1011),
        ({"passenger__email": "ada@localhost"}, 1011),
        ({"passenger__email": "a@" + "b" * 320 + ".com"}, 1011),
        ({"passenger__email": True}, 1011),
        ({"travel_details": None}, 1012),
        ({"travel_details": "BA117"}, 1012),
        ({"travel_details__extra_requests": 1}, 1012),
        ({"travel_details__extra_requests": "x" * 1001}, 1012),
        ({"travel_details__flight_number": DROP}, 1013),
        ({"travel_details__flight_number": "x" * 65}, 1013),
        ({"suitcase": DROP}, 1014),
        ({"suitcase": 3}, 1015),
        ({"suitcase": -1}, 1015),
        ({"suitcase": True}, 1015),
        ({"suitcase": 2.0}, 1015),
        ({"small_bags": None}, 1016),
        ({"small_bags": 2}, 1017),
        ({"small_bags": "0"}, 1017),
        ({"extra_services": {}}, 1018),
        ({"extra_services": [7]}, 1018),
        ({"extra_services": [{"id": 7}] * 21}, 1018),
        ({"extra_services": [{"id": 7}, {"id": 7, "quantity": 2}]}, 1018),
        ({"extra_services": [{"quantity": 1}]}, 1019),
        ({"extra_services": [{"id": 7}, {"id": None}]}, 1019),
        ({"extra_services": [{"id": 9}]}, 1020),
        ({"extra_services": [{"id": "7"}]}, 1020),
        ({"extra_services": [{"id": True}]}, 1020),
        ({"extra_services": [{"id": 7.0}]}, 1020),
        ({"extra_services": [{"id": 7, "quantity": 0}]}, 1021),
        ({"extra_services": [{"id": 7, "quantity": 21}]}, 1021),
        ({"extra_services": [{"id": 7, "quantity": True}]}, 1021),
        ({"extra_services": [{"id": 7, "quantity": 1.5}]}, 1021),
    ],
)
def test_refusals(changes: dict[str, Any], code: int) -> None:
    assert code_of(body(**changes)) == code


def test_search_and_vehicle_come_first() -> None:
    assert code_of({}, search_found=False, offer=None) == 1002
    assert code_of(body(passenger=None), search_found=False, offer=None) == 1002
    assert code_of(body(vehicle_id=None, passenger=None), offer=None) == 1003
    assert code_of(body(passenger=None), offer=None) == 1004


@pytest.mark.parametrize(
    ("extras", "code"),
    [
        ([{"id": 7, "quantity": 0}, {"id": 99}, {}, "x"], 1018),
        ([{"id": 7, "quantity": 0}, {"id": 99}, {}], 1019),
        ([{"id": 7, "quantity": 0}, {"id": 99}], 1020),
        ([{"id": 7, "quantity": 0}, {"id": 8}], 1021),
    ],
)
def test_extras_fail_in_table_order_across_items(extras: list[Any], code: int) -> None:
    assert code_of(body(extra_services=extras)) == code


def test_travel_details_failure_precedes_flight_number() -> None:
    assert code_of(body(travel_details={"flight_number": None, "extra_requests": 5})) == 1012


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 1001),
        ("", 1001),
        (1, 1002),
        (True, 1002),
        (["s"], 1002),
        ("s" * 65, 1002),
        ("s_\x00", 1002),
    ],
)
def test_check_search_id_refusals(value: Any, expected: int) -> None:
    with pytest.raises(DomainError) as raised:
        check_search_id({"search_id": value} if value is not None else {})
    assert int(raised.value.code) == expected


def test_check_search_id_accepts_a_string() -> None:
    assert check_search_id({"search_id": "s_abc"}) == "s_abc"
    assert check_search_id({"search_id": "s" * 64}) == "s" * 64


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        ("1", 1),
        (12, 12),
        ("12", 12),
        (999_999_999, 999_999_999),
        ("999999999", 999_999_999),
        (0, None),
        ("0", None),
        (-1, None),
        ("-1", None),
        (1_000_000_000, None),
        ("1000000000", None),
        (2**63, None),
        (10**30, None),
        (True, None),
        (False, None),
        (1.0, None),
        (1.5, None),
        ("01", None),
        (" 1", None),
        ("1 ", None),
        ("+1", None),
        ("", None),
        ("１", None),
        ("١", None),
        ("1e0", None),
        (None, None),
        ([1], None),
        ({"id": 1}, None),
    ],
)
def test_vehicle_number(value: Any, expected: int | None) -> None:
    assert vehicle_number(value) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", 1),
        ("5", 5),
        ("0", 0),
        ("007", 7),
        ("123456789", 123_456_789),
    ],
)
def test_reason_id_accepts_ascii_digits(raw: str, expected: int) -> None:
    assert reason_id(raw) == expected


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("", Code.CANCELLATION_TYPE_REQUIRED),
        ("abc", Code.CANCELLATION_TYPE_INVALID),
        ("1.5", Code.CANCELLATION_TYPE_INVALID),
        ("-1", Code.CANCELLATION_TYPE_INVALID),
        ("+1", Code.CANCELLATION_TYPE_INVALID),
        (" 1", Code.CANCELLATION_TYPE_INVALID),
        ("1 ", Code.CANCELLATION_TYPE_INVALID),
        ("true", Code.CANCELLATION_TYPE_INVALID),
        ("１", Code.CANCELLATION_TYPE_INVALID),
        ("²", Code.CANCELLATION_TYPE_INVALID),
        ("1234567890", Code.CANCELLATION_TYPE_INVALID),
        ("1\x00", Code.CANCELLATION_TYPE_INVALID),
    ],
)
def test_reason_id_refusals(raw: str, code: Code) -> None:
    with pytest.raises(DomainError) as raised:
        reason_id(raw)
    assert raised.value.code is code


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (None, None),
        ("", None),
        ("   ", None),
        ("\x00\x00", None),
        (" x ", "x"),
        ("a\x00b", "ab"),
        ("a" * 1000, "a" * 1000),
        ("a" * 1001, "a" * 1000),
        ("é" * 5000, "é" * 1000),
        ("  " + "b" * 1000 + "  ", "b" * 1000),
        # docs/rules/booking.md#text: cleaned of controls and bidirectional overrides, lines kept
        ("😀\u202e", "😀"),
        ("left\u2066right\u2069 \x1b[31m\x85", "leftright [31m"),
        ("line one\r\nline two\tend", "line one\r\nline two\tend"),
    ],
)
def test_clean_note(note: str | None, expected: str | None) -> None:
    assert clean_note(note) == expected
