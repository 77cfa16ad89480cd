"""What one client (one agent) knows about its leases.

The epoch it holds per task, and which task each checkpoint it has seen
belongs to, so that every fenced write (create, patch, finalize, link,
handoff) carries ``Baton-Lease-Epoch`` without the caller passing it, as the
TypeScript client's lease book does.

An epoch is forgotten only when its lease is released. A lease that was
superseded or expired keeps its epoch on purpose: the agent's late writes
must keep carrying the old epoch and keep being refused with
``lease_superseded``, instead of going out without one and being accepted
while the task has no live lease.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

#: How many checkpoint → task entries are kept; the oldest is dropped past it (a dropped one is looked up again).
MAX_CHECKPOINTS = 10_000


class LeaseBook:
    def __init__(self) -> None:
        self._epochs: dict[str, int] = {}
        self._task_of: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def epoch(self, task_id: str) -> int | None:
        return self._epochs.get(task_id)

    def holds_any(self) -> bool:
        return bool(self._epochs)

    def hold(self, lease: Mapping[str, Any]) -> None:
        """The lease was granted or renewed: its epoch fences the task's writes from now on."""
        task_id, epoch = str(lease["taskId"]), int(lease["epoch"])
        with self._lock:
            held = self._epochs.get(task_id)
            # A late answer (a slow renew of an older lease) must not lower the epoch.
            if held is None or epoch >= held:
                self._epochs[task_id] = epoch

    def release(self, lease: Mapping[str, Any]) -> None:
        task_id, epoch = str(lease["taskId"]), int(lease["epoch"])
        with self._lock:
            held = self._epochs.get(task_id)
            if held is not None and held <= epoch:
                del self._epochs[task_id]

    def saw(self, checkpoint: Mapping[str, Any] | None) -> None:
        """Remembers the task of a checkpoint from an answer."""
        if not checkpoint:
            return
        with self._lock:
            self._task_of.pop(checkpoint["id"], None)
            self._task_of[checkpoint["id"]] = checkpoint["taskId"]
            if len(self._task_of) > MAX_CHECKPOINTS:
                self._task_of.popitem(last=False)

    def task_of(self, checkpoint_id: str) -> str | None:
        return self._task_of.get(checkpoint_id)

    def headers(self, task_id: str | None) -> dict[str, str]:
        epoch = None if task_id is None else self._epochs.get(task_id)
        return {} if epoch is None else {"baton-lease-epoch": str(epoch)}
