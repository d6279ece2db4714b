"""Webhooks to clients (issue 14, DECISIONS 13): endpoints, events written with every booking
change, and their signed delivery by the worker."""
