"""The service has an icon (a browser tab's, a bookmark's): ``/favicon.svg``, also answered at
``/favicon.ico`` where browsers ask by habit, linked by the landing page and by every signed-in area's
layout, and allowed by their Content-Security-Policy (``img-src 'self'``)."""

from __future__ import annotations

import httpx


async def test_the_icon_is_served_and_linked(http: httpx.AsyncClient) -> None:
    for path in ("/favicon.svg", "/favicon.ico"):
        icon = await http.get(path)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml"), path
        assert icon.text.startswith("<svg") and icon.text.endswith("</svg>")
    for page in ("/", "/console/login", "/partner/login", "/agency/login"):
        answer = await http.get(page)
        assert '<link rel="icon" type="image/svg+xml" href="/favicon.svg">' in answer.text, page
        assert "img-src 'self'" in answer.headers["content-security-policy"], page
