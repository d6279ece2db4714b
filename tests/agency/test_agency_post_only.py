"""Opening the address of a form's action with GET (a reload of the page a ``Create key`` answered, a
pasted link) leads back to the page the action belongs to, with the navigation (was: a bare 405),
and does nothing."""

from __future__ import annotations

import httpx

from tests.agency.conftest import MakeAgency, SignedIn


async def test_a_get_of_an_action_leads_back_to_its_page(make_agency: MakeAgency, signed_in: SignedIn) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/developers")
    made = await admin.post("/agency/developers/keys", {})
    assert made.status_code == 201
    cases = {
        "/agency/developers/keys": "/agency/developers",
        "/agency/developers/keys/tk_abc/revoke": "/agency/developers",
        "/agency/developers/endpoints": "/agency/developers",
        "/agency/developers/endpoints/we_1/rotate": "/agency/developers/endpoints/we_1",
        "/agency/developers/endpoints/we_1/test": "/agency/developers/endpoints/we_1",
        "/agency/developers/endpoints/we_1/status": "/agency/developers/endpoints/we_1",
        "/agency/developers/deliveries/7/resend": "/agency/developers/events",
        "/agency/users/3/status": "/agency/users",
    }
    for path, page in cases.items():
        answer = await admin.get(path)
        assert answer.status_code == 303 and answer.headers["location"] == page, (path, answer.status_code)
    back = await admin.get("/agency/developers")
    assert back.status_code == 200 and 'href="/agency/bookings"' in back.text  # its page, with the navigation
    listed = back.text.count("Revoke ")
    assert listed >= 2  # the key made above and the agency's first one: a GET revoked nothing


async def test_in_the_console_and_the_portal_too(http: httpx.AsyncClient) -> None:
    """Every signed-in area does the same for its forms' actions (webauth/site.py): the nearest page
    above the action's address (which then asks for a sign-in when there is none)."""
    cases = {
        "/console/clients/5/keys": "/console/clients/5",
        "/console/partners/3/rotate-secret": "/console/partners/3",
        "/console/bookings/TB-AAAA/refund": "/console/bookings/TB-AAAA",
        "/partner/account/rotate-secret": "/partner/account",
        "/partner/bookings/TB-AAAA/accept": "/partner/bookings/TB-AAAA",
    }
    for path, page in cases.items():
        answer = await http.get(path)
        assert answer.status_code == 303 and answer.headers["location"] == page, (path, answer.status_code)
