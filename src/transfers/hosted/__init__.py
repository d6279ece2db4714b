"""Hosted partners (docs/rules/hosted-partners.md): partners without a server, answering in the portal."""
