"""The agency portal's sections, one module each (docs/rules/agency-portal.md#pages)."""
