"""Webhooks to clients (issue 14, docs/rules/webhooks.md): endpoints, events written with every booking
change, and their signed delivery by the worker."""
