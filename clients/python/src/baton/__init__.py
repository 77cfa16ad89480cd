"""Baton's Python client: ``Client`` / ``AsyncClient`` over Baton's HTTP API.

Framework adapters live in subpackages, imported only when asked for, so
the core needs httpx alone: ``baton.langgraph``, ``baton.openai_agents``,
``baton.adk``, ``baton.a2a`` (each with its extra,
``pip install "baton-client[langgraph]"``).
"""

from ._client import AsyncClient, Client
from ._errors import UNEXPECTED_RESPONSE, BatonError
from ._retry import RetryPolicy

__all__ = ["UNEXPECTED_RESPONSE", "AsyncClient", "BatonError", "Client", "RetryPolicy"]
__version__ = "0.1.0"
