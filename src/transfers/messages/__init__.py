"""Messages to travellers (docs/rules/messages.md)."""
