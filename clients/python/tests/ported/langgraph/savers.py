"""What the ported LangGraph tests construct instead of the framework's own savers.

Each name stands where the original test names its saver, so the test's
text stays as written (test/PORTED.md): a fresh Baton saver over the test
session's server, its data scoped to itself (its own agent id and task
prefix), as a fresh in-memory or ``:memory:`` SQLite saver starts empty.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from baton import AsyncClient, Client
from baton.langgraph import AsyncBatonSaver, BatonSaver
from baton_server import TOKENS, current


def _scope() -> dict[str, str]:
    scope = uuid.uuid4().hex[:12]
    return {"agent_id": f"lg-{scope}", "task_prefix": f"lg-{scope}:"}


class InMemorySaver(BatonSaver):
    """``BatonSaver`` in place of ``langgraph.checkpoint.memory.InMemorySaver``."""

    def __init__(self, *, serde: Any = None) -> None:
        super().__init__(Client(current().url, token=TOKENS["writer"]), serde=serde, **_scope())


class AsyncInMemorySaver(AsyncBatonSaver):
    """``AsyncBatonSaver`` in place of ``InMemorySaver`` in the conformance suite's self-test."""

    def __init__(self, *, serde: Any = None) -> None:
        super().__init__(AsyncClient(current().url, token=TOKENS["writer"]), serde=serde, **_scope())


class SqliteSaver(BatonSaver):
    """``BatonSaver`` in place of ``langgraph.checkpoint.sqlite.SqliteSaver``."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator[BatonSaver]:
        with Client(current().url, token=TOKENS["writer"]) as client:
            yield BatonSaver(client, **_scope())
