"""Messages to travellers, in their language (docs/rules/messages.md).

The client's settings (``settings_rules``, ``settings_service``), the booking's language and channel
switches, the messages planned from the booking's client events and sent through the delivery engine,
and the opt-outs. Above the booking and the client events it reads; below the surfaces that show it.
"""
