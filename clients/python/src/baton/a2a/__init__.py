"""The A2A Python SDK's ``TaskStore`` over Baton.

from baton import AsyncClient
from baton.a2a import BatonTaskStore

store = BatonTaskStore(client=AsyncClient(url, token=token))   # Baton task id = A2A task id
"""

from .task_store import BatonTaskStore

__all__ = ["BatonTaskStore"]
