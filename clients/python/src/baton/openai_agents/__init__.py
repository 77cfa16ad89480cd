"""The OpenAI Agents SDK over Baton: ``BatonSession`` and ``save_run_state`` / ``load_run_state``.

from baton import AsyncClient
from baton.openai_agents import BatonSession, load_run_state, save_run_state

session = BatonSession(client=AsyncClient(url, token=token), session_id="support-4711")
result = await Runner.run(agent, "Hello", session=session)
"""

from .record import CorruptedError
from .run_state import load_run_state, save_run_state
from .session import BatonSession

__all__ = ["BatonSession", "CorruptedError", "load_run_state", "save_run_state"]
