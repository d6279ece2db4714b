"""A picture of each message to travellers (docs/integrators/messages.md#templates), rendered by the
service's own ``render`` (``transfers.messages.text``) for one booking in English: the e-mail (sender,
subject, text) and the SMS (as a phone shows it) side by side, laid out in a small HTML page and taken by
Chromium. ``TRANSFERS_UPDATE_SCREENSHOTS=1`` writes them to docs/screenshots/message-<template>.png.

Each picture is also checked for what a message must and must not say (docs/rules/messages.md#templates):
the brand, the reservation number, the local pickup, the tracking and opt-out links, the support phone;
never the price or the transport company."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Browser, Page

from transfers.messages.optout_link import optout_token
from transfers.messages.text import CHANNELS, MessageContext, render

LONDON = ZoneInfo("Europe/London")
BASE = "https://transfers.example"
KEY = b"the pictures' own key: the same links on every run"
CONTEXT = MessageContext(
    brand_name="Sunny Tours",
    reservation_no="TB-7KQ2M9X4PA",
    pickup_local=datetime(2026, 12, 4, 14, 30, tzinfo=LONDON),
    airport_iata="LHR",
    airport_name="London Heathrow",
    tracking_url=f"{BASE}/t/q8ZrT2mVbX4nK7pLw3sYcA",
    optout_url=f"{BASE}/m/{optout_token(4242, 'email', 'ada@example.com', KEY)}",
    support_phone="+442079460123",
    driver_first_name="Sam",
    driver_plate="AB12 CDE",
    vehicle="Mercedes-Benz E-Class",
    previous_pickup_local=datetime(2026, 12, 4, 13, 45, tzinfo=LONDON),
    rating_url=f"{BASE}/r/Xw3mQ9dL2kVt7nB4rYp1sATB-7KQ2M9X4PA",
    meeting_point="Terminal 5 arrivals, by Costa Coffee",
    pickup_place="London Heathrow Terminal 5",
    dropoff_place="Trafalgar Square, London",
)
SMS_CONTEXT = replace(CONTEXT, optout_url=f"{BASE}/m/{optout_token(4242, 'sms', '+447911123456', KEY)}")
PRICE_WORDS = ("EUR", "€", "£", "price", "Heathrow Cars")

STYLE = """
body{margin:0;padding:24px;background:#eef1f5;color:#1b1f24;
  font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:17px;margin:0 0 14px;color:#5a6270;font-weight:600}
.row{display:flex;gap:28px;align-items:flex-start;flex-wrap:wrap}
.mail{background:#fff;border:1px solid #d5d9e0;border-radius:8px;width:560px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.mail .head{padding:12px 16px;border-bottom:1px solid #e3e7ee;font-size:13px;color:#5a6270}
.mail .head b{color:#1b1f24}
.mail .subject{font-size:17px;font-weight:700;color:#1b1f24;margin-top:4px}
.mail pre,.bubble{white-space:pre-wrap;overflow-wrap:anywhere;font:inherit;margin:0}
.mail pre{padding:16px}
.phone{width:300px;background:#fff;border:10px solid #1b1f24;border-radius:34px;padding:26px 12px 40px;min-height:320px}
.phone .who{text-align:center;font-size:12px;color:#5a6270;margin:0 0 14px}
.bubble{background:#e9e9eb;border-radius:18px;padding:10px 13px;font-size:14px;max-width:250px}
"""


def page_of(template: str) -> str:
    parts = []
    if "email" in CHANNELS[template]:
        mail = render(template, "email", "en", CONTEXT)
        parts.append(
            '<div class="mail"><div class="head">From <b>Sunny Tours</b> &lt;transfers@transfers.example&gt;'
            f'<div class="subject">{html.escape(mail.subject or "")}</div></div>'
            f"<pre>{html.escape(mail.body)}</pre></div>"
        )
    if "sms" in CHANNELS[template]:
        text = render(template, "sms", "en", SMS_CONTEXT)
        parts.append(
            f'<div class="phone"><p class="who">SunnyTours</p><p class="bubble">{html.escape(text.body)}</p></div>'
        )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><style>{STYLE}</style></head><body>'
        f'<h1>{template}</h1><div class="row">{"".join(parts)}</div></body></html>'
    )


@pytest.mark.parametrize("template", list(CHANNELS))
async def test_a_picture_of_each_message(
    template: str, browser: Browser, shoot: Callable[[Page, str], Awaitable[None]]
) -> None:
    for channel in CHANNELS[template]:
        said = render(template, channel, "en", CONTEXT if channel == "email" else SMS_CONTEXT)
        text = (said.subject or "") + "\n" + said.body
        assert "Sunny Tours" in text and "TB-7KQ2M9X4PA" in text, (template, channel)
        assert not any(word in text for word in PRICE_WORDS), (template, channel, text)
        if template != "feedback":
            assert "/m/" in text and "/t/" in text, (template, channel, text)
        if template == "driver_arrived":
            assert "Sam" in text and "AB12 CDE" in text
    context = await browser.new_context(viewport={"width": 1000, "height": 600}, java_script_enabled=False)
    try:
        page = await context.new_page()
        await page.set_content(page_of(template))
        await shoot(page, f"message-{template}")
    finally:
        await context.close()
