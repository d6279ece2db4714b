"""The two refusals the signed-in areas' own routes raise (a page, a role), answered by
``site.build_area`` as HTML pages like every other ``transfers.errors.DomainError``: one class each
for all areas, so a new area's pages need no handlers of their own."""

from __future__ import annotations

from transfers.errors import NotFound, Refused


class NotAllowed(Refused):
    """This viewer may not do this here: a 403 page ("... Nothing was changed."). An area may
    subclass it to give its usual message (the console: the operator's role)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class PageNotFound(NotFound):
    """No such thing for this viewer (another partner's booking looks exactly the same): a 404 page."""

    default_message = "There is no such page."


def path_id(value: str, what: str) -> int:
    """A numeric id from a page's path (``/clients/{id}``): anything but 1..18 ASCII digits naming a
    positive number is the 404 page of a missing ``what``, never a 422 or a 500."""
    if not value.isascii() or not value.isdigit() or len(value) > 18 or int(value) <= 0:
        raise PageNotFound(f"There is no such {what}.")
    return int(value)
