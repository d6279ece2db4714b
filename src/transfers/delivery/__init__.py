"""The delivery engine: one way to get a message to someone at least once (docs/architecture/deliveries.md).

Imports no consumer (bookings, partners, hosted partners, webhooks, mail): an import-linter
contract in pyproject.toml keeps it so.
"""
