"""Hosted partners (issue 16): partners without a server, answering in the portal."""
