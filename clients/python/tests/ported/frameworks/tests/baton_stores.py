"""What the ported A2A tests construct instead of the SDK's stores (test/PORTED.md).

``InMemoryTaskStore()``: a ``BatonTaskStore`` over the test session's
server, scoped to itself by a task prefix of its own, as a new in-memory
store starts empty. ``use_copying`` is accepted for its one value a store
across a network can honour: every read is a fresh copy.
"""

from __future__ import annotations

import uuid

from baton import AsyncClient
from baton.a2a import BatonTaskStore
from baton_server import TOKENS, current


class InMemoryTaskStore(BatonTaskStore):
    def __init__(self, use_copying: bool = True) -> None:
        if not use_copying:
            raise ValueError("A store across a network always answers with copies.")
        super().__init__(AsyncClient(current().url, token=TOKENS["writer"]), task_prefix=f"a2a-{uuid.uuid4().hex}:")
