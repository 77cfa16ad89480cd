"""What the ported ADK tests construct instead of ADK's session services (test/PORTED.md).

Both names are a ``BatonSessionService`` over the test session's server,
scoped to itself by a task prefix of its own, as a new in-memory service or
a ``sqlite:///:memory:`` database starts empty.
"""

from __future__ import annotations

import uuid

from baton import AsyncClient
from baton.adk import BatonSessionService
from baton_server import TOKENS, current


class InMemorySessionService(BatonSessionService):
    def __init__(self) -> None:
        super().__init__(AsyncClient(current().url, token=TOKENS["writer"]), task_prefix=f"{uuid.uuid4().hex[:12]}/")


class DatabaseSessionService(BatonSessionService):
    def __init__(self, db_url: str) -> None:
        super().__init__(AsyncClient(current().url, token=TOKENS["writer"]), task_prefix=f"{uuid.uuid4().hex[:12]}/")
