"""The message settings as a web form (docs/rules/messages.md#settings), the same on the agency portal's
``Messages`` page and the console's client page: what was typed into a ``SettingsChange`` for
``settings_service.update_settings``, the settings back into the form's values, and a refusal of
``settings_rules`` as words beside the field that can fix it. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transfers.i18n.languages import LANGUAGES
from transfers.messages.models import MessageSettings
from transfers.messages.settings_rules import MessageSettingsInvalid, SettingsChange

CHECKED = "on"
LANGUAGE_NAMES = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "es": "Español",
    "it": "Italiano",
    "pt": "Português",
    "nl": "Nederlands",
}
LANGUAGE_CHOICES = tuple((code, LANGUAGE_NAMES.get(code, code)) for code in LANGUAGES)
TEXT_FIELDS = {"brand_name": 200, "sms_sender": 100, "reply_to": 400, "support_phone": 100, "default_language": 20}
CHECKBOXES = ("email", "sms", "travellers_consented", "feedback")
LABELS = {
    "brand_name": "Brand name",
    "sms_sender": "SMS sender",
    "reply_to": "Reply-to e-mail",
    "support_phone": "Support phone",
    "default_language": "Default language",
}
CONSENT_NEEDED = "To send SMS, confirm that your travellers agreed to be texted about their transfers."


def _text(values: Mapping[str, object], name: str, limit: int) -> str:
    value = values.get(name)
    return value.replace("\x00", "")[:limit] if isinstance(value, str) else ""


def typed_values(values: Mapping[str, object]) -> dict[str, Any]:
    """What was typed and ticked, kept to show the form again (text cut to a bound, no NUL)."""
    typed: dict[str, Any] = {name: _text(values, name, limit) for name, limit in TEXT_FIELDS.items()}
    typed.update({name: values.get(name) == CHECKED for name in CHECKBOXES})
    return typed


def form_values(settings: MessageSettings) -> dict[str, Any]:
    """The stored settings as the form shows them."""
    return {
        "brand_name": settings.brand_name or "",
        "sms_sender": settings.sms_sender or "",
        "reply_to": settings.reply_to or "",
        "support_phone": settings.support_phone or "",
        "default_language": settings.default_language or "en",
        "email": settings.email_on,
        "sms": settings.sms_on,
        "travellers_consented": settings.travellers_consented_at is not None,
        "feedback": settings.feedback,
    }


def change_of(typed: Mapping[str, Any], current: MessageSettings) -> SettingsChange:
    """The whole form as one change: every field is on the form, so each is set as typed. An empty brand
    name leaves a client that never had one without one (it is required only once something is on)."""
    brand = str(typed["brand_name"])
    return SettingsChange(
        channels=[name for name in ("email", "sms") if typed[name]],
        brand_name=brand if brand.strip() or current.brand_name else None,
        sms_sender=str(typed["sms_sender"]),
        reply_to=str(typed["reply_to"]),
        support_phone=str(typed["support_phone"]),
        default_language=str(typed["default_language"]) or None,
        feedback=bool(typed["feedback"]),
        travellers_consented=bool(typed["travellers_consented"]),
    )


def field_error(refusal: MessageSettingsInvalid) -> dict[str, str]:
    """The refusal beside its field, in words."""
    if refusal.field == "channels":
        if "agreed" in refusal.reason:
            return {"travellers_consented": CONSENT_NEEDED}
        return {"email": f"Channels: {refusal.reason}."}
    if refusal.field == "brand_name" and "before messages" in refusal.reason:
        return {"brand_name": "Enter your brand name (1 to 30 characters): every message opens with it."}
    label = LABELS.get(refusal.field, refusal.field.replace("_", " ").capitalize())
    field = refusal.field if refusal.field in TEXT_FIELDS else "email"
    return {field: f"{label}: {refusal.reason}."}
