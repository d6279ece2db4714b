"""Airport ground-transfer booking service."""

__version__ = "0.1.0"
