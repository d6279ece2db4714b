"""The SDK's version: read by ``sdk/pyproject.toml`` and sent in the User-Agent."""

__version__ = "0.1.0"
