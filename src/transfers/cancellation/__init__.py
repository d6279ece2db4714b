"""Cancellation policies, fees and amendments (docs/rules/cancellation.md)."""
