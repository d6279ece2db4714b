"""Cancellation policies, fees and amendments (DECISIONS 14)."""
