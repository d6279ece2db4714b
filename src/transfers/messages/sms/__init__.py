"""Texts to travellers (docs/rules/messages.md#sending): the provider interface and its three providers
(``none``, ``sandbox``, ``twilio``), who a text is sent from, and the signature of Twilio's callbacks.

Nothing here touches the database: the delivery engine (``messages/delivery.py``) records each attempt and
its answer; the callback routes (``api/routes/sms_hooks.py``) record opt-outs and receipts.
"""
