"""Webhooks to clients (docs/rules/webhooks.md): endpoints, and the signed delivery by the worker
of the events every booking change writes (which events, and their inserts: ``client_events/``)."""
