"""Google ADK sessions over Baton: ``BatonSessionService``.

from baton import AsyncClient
from baton.adk import BatonSessionService

runner = Runner(agent=agent, app_name="shop", session_service=BatonSessionService(AsyncClient(url, token=token)))
"""

from .session_service import BatonSessionService

__all__ = ["BatonSessionService"]
