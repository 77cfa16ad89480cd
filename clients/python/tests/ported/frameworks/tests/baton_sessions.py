"""What the ported OpenAI Agents tests construct instead of the SDK's sessions (test/PORTED.md).

``SQLiteSession(session_id, db_path)``: a ``BatonSession`` over the test
session's server. Sessions of one database file share a Baton scope (a task
id prefix), as they share the file; ``":memory:"`` is a fresh scope per
instance, as each such SQLite session has its own database. The client is
the sync ``baton.Client``, so the session also serves ``Runner.run_sync``'s
own event loops.
``SimpleListSession(session_id=..., history=...)``: a ``BatonSession`` over
the Baton task of that session id; ``history``, the items a rehydrated
in-memory session is handed, is not written: Baton already holds them, and
the scenario's own assertions on ``get_items`` read them back from Baton.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from baton import Client
from baton.openai_agents import BatonSession
from baton_server import TOKENS, current

_scopes: dict[str, str] = {}


def _client() -> Client:
    return Client(current().url, token=TOKENS["writer"])


class SQLiteSession(BatonSession):
    def __init__(self, session_id: str, db_path: str | Path = ":memory:", session_settings: Any = None) -> None:
        where = str(db_path)
        scope = uuid.uuid4().hex if where == ":memory:" else _scopes.setdefault(where, uuid.uuid4().hex)
        super().__init__(
            _client(), session_id, task_id=f"oa-{scope}:{session_id}", session_settings=session_settings
        )

    def close(self) -> None:
        self.client.close()  # type: ignore[union-attr]


class SimpleListSession(BatonSession):
    _tasks: dict[str, str] = {}

    def __init__(self, session_id: str = "default", history: list[Any] | None = None, session_settings: Any = None) -> None:
        task_id = self._tasks.setdefault(session_id, f"oa-{uuid.uuid4().hex}:{session_id}")
        super().__init__(_client(), session_id, task_id=task_id, session_settings=session_settings)
