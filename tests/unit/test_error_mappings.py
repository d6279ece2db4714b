"""The three mappings of the domain error tree, one per surface (docs/architecture/errors.md): the
API's envelopes and statuses, the console's and portal's pages, the CLI's exit codes."""

from __future__ import annotations

import pytest

from transfers.api.errors import render
from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.reverse import BookingNotFound
from transfers.cli.errors import exit_code_for, lines_of
from transfers.errors import Code, Conflict, DomainError, ErrorCode, Invalid, NotFound, Refused, Unavailable
from transfers.ops.errors import BackendUnavailable, OperatorError, SettingsInvalid
from transfers.webauth.http import CsrfRefused
from transfers.webauth.site import CSRF_MESSAGE, error_page_for

MEANINGS = (NotFound, Refused, Conflict, Invalid, Unavailable)


def test_the_api_answers_a_spec_code_422_whatever_the_meaning() -> None:
    for error in (NotFound(Code.CANCELLATION_RESERVATION_NOT_FOUND), Refused(Code.CANCELLATION_FAILED)):
        answer = render(error)
        assert answer is not None
        assert error.code is not None
        assert (answer.status, answer.body) == (
            422,
            {"status": "Error", "code": int(error.code), "message": error.code.name},
        )


def test_the_api_answers_a_string_code_with_its_status_message_and_headers() -> None:
    answer = render(Refused(ErrorCode.RATE_LIMITED, "slow down", headers={"Retry-After": "3"}))
    assert answer is not None
    assert (answer.status, answer.body, answer.headers) == (
        429,
        {"status": "Error", "code": "RATE_LIMITED", "message": "slow down"},
        {"Retry-After": "3"},
    )


def test_the_reverse_api_shape_for_errors_without_a_code() -> None:
    found = render(BookingNotFound(), reverse_api=True)
    conflict = render(ConcurrentChange(), reverse_api=True)
    refused = render(Refused("a COMPLETED booking cannot be cancelled"), reverse_api=True)
    assert found is not None and conflict is not None and refused is not None
    assert found.status == 404 and found.body["message"] == "Booking not found"
    assert (conflict.status, conflict.body) == (
        409,
        {"status": "Error", "message": "The booking changed concurrently; retry."},
    )
    assert (refused.status, refused.body) == (
        422,
        {"status": "Error", "message": "a COMPLETED booking cannot be cancelled"},
    )


def test_an_uncoded_error_off_the_reverse_api_is_a_bug_left_to_the_500_but_unavailable_is_503() -> None:
    assert render(Refused("no code")) is None
    unavailable = render(Unavailable())
    assert unavailable is not None
    assert (unavailable.status, unavailable.body["code"], unavailable.headers) == (
        503,
        "UNAVAILABLE",
        {"Retry-After": "5"},
    )


@pytest.mark.parametrize(
    ("error", "status"),
    [(NotFound("gone"), 404), (Refused("no"), 403), (Conflict("moved"), 409), (Invalid("bad"), 422)],
)
def test_each_meaning_has_its_page(error: DomainError, status: int) -> None:
    page = error_page_for(error)
    assert page.status == status
    assert page.message.startswith(error.message)
    if status != 404:
        assert page.message.endswith("Nothing was changed.")


def test_the_csrf_refusal_and_an_unavailable_database_have_their_own_pages() -> None:
    csrf = error_page_for(CsrfRefused())
    assert (csrf.heading, csrf.message, csrf.status) == ("Refused", CSRF_MESSAGE, 403)
    assert error_page_for(Unavailable()).status == 503


def test_exit_codes_as_documented() -> None:
    for meaning in MEANINGS:
        assert exit_code_for(meaning("x")) == (69 if meaning is Unavailable else 1), meaning
    assert exit_code_for(SettingsInvalid("A", "B")) == 2
    assert exit_code_for(BackendUnavailable("PostgreSQL is down")) == 69
    assert exit_code_for(OperatorError("bad revision", exit_code=2)) == 2
    assert lines_of(SettingsInvalid("A", "B")) == ["A", "B"]
    assert lines_of(NotFound("no client 999")) == ["no client 999"]
