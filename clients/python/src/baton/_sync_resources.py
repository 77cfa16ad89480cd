"""The resources of ``Client``, made from ``_async_resources.py``: do not edit by hand.

``_sync_resources.py`` is made from this file by ``scripts/make_sync.py``
(``async``/``await`` dropped, ``Async`` names made plain); a test fails when
the two drift apart. Every method maps to one route (docs/client.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import _operations as ops
from ._lease_book import LeaseBook
from ._operations import Call, segment
from ._runner import run as _run
from ._sse import event_stream as _event_stream
from ._transport import Transport as _Transport
from .types import (
    ChainCheck,
    Checkpoint,
    CheckpointInput,
    CheckpointPage,
    HandoffAcknowledged,
    HandoffStarted,
    LeaseView,
    LinkResult,
    Page,
    RecoveryCompleted,
    RecoveryPoint,
    RecoveryStarted,
    ResumePrompt,
    StoredEvent,
    TaskInfo,
    VerifiedCheckpoint,
)


class _Resource:
    def __init__(self, transport: _Transport, book: LeaseBook) -> None:
        self._transport = transport
        self._book = book


class Checkpoints(_Resource):
    """``client.checkpoints``: create, read, change, finalize, link, lineage, revisions, search, history."""

    def create(
        self, body: CheckpointInput, *, idempotency_key: str | None = None, traceparent: str | None = None
    ) -> Checkpoint:
        """``POST /v1/checkpoints``; with ``parentId`` the link is made in the same transaction."""
        return _run(self._transport, ops.create(self._book, body, idempotency_key, traceparent))

    def get(self, checkpoint_id: str, *, version: int | None = None) -> Checkpoint:
        """``GET /v1/checkpoints/:id`` (``?version=N`` for an earlier version), its hash verified by the service."""
        return _run(self._transport, ops.get(self._book, checkpoint_id, version))

    def patch(
        self, checkpoint_id: str, patch: Mapping[str, Any], *, if_match: int, idempotency_key: str | None = None
    ) -> Checkpoint:
        """``PATCH /v1/checkpoints/:id``: a JSON Merge Patch against version ``if_match`` (stale → 412)."""
        return _run(self._transport, ops.patch(self._book, checkpoint_id, patch, if_match, idempotency_key))

    def finalize(
        self,
        checkpoint_id: str,
        request: Mapping[str, Any],
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Checkpoint:
        """``POST /v1/checkpoints/:id/finalize``: immutable afterwards."""
        return _run(self._transport, ops.finalize(self._book, checkpoint_id, request, if_match, idempotency_key))

    def link(self, parent_id: str, child_id: str, *, idempotency_key: str | None = None) -> LinkResult:
        """``POST /v1/checkpoints/:parentId/links``: ``child_id`` gets ``parent_id`` as its one parent."""
        return _run(self._transport, ops.link(self._book, parent_id, child_id, idempotency_key))

    def lineage(self, checkpoint_id: str, *, limit: int | None = None, cursor: str | None = None) -> Any:
        """``GET /v1/checkpoints/:id/lineage``: ancestors (nearest first), then children, a page at a time."""
        call = Call(
            "GET", f"/v1/checkpoints/{segment(checkpoint_id)}/lineage", query={"limit": limit, "cursor": cursor}
        )
        return _run(self._transport, ops.json_op(call))

    def revisions(self, checkpoint_id: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """``GET /v1/checkpoints/:id/revisions``: every version, oldest first, with its hash."""
        call = Call(
            "GET", f"/v1/checkpoints/{segment(checkpoint_id)}/revisions", query={"limit": limit, "cursor": cursor}
        )
        result: Page = _run(self._transport, ops.json_op(call))
        return result

    def search(
        self, *, labels: Mapping[str, str | int | float | bool] | None = None, **query: Any
    ) -> CheckpointPage:
        """``GET /v1/checkpoints``: ``task_id``-style names are sent as the API's (``taskId``); filters AND."""
        params = {_camel(name): value for name, value in query.items()}
        return _run(self._transport, ops.search(self._book, params, labels))

    def history(self, task_id: str, *, limit: int | None = None, cursor: str | None = None) -> CheckpointPage:
        """``GET /v1/tasks/:taskId/checkpoints``: a task's checkpoints, newest first."""
        return _run(self._transport, ops.history(self._book, task_id, limit, cursor))

    def latest(self, task_id: str) -> VerifiedCheckpoint:
        """``GET /v1/tasks/:taskId/checkpoints/latest``: the newest that verifies, and the corrupt ones passed over."""
        return _run(self._transport, ops.latest(self._book, task_id))

    def resume_prompt(
        self, checkpoint_id: str, *, max_tokens: int | None = None, version: int | None = None
    ) -> ResumePrompt:
        """``GET /v1/checkpoints/:id/resume-prompt``: the continuation prompt, fitted to ``max_tokens``."""
        query: dict[str, Any] = {"maxTokens": max_tokens, "version": version}
        call = Call("GET", f"/v1/checkpoints/{segment(checkpoint_id)}/resume-prompt", query=query)
        result: ResumePrompt = _run(self._transport, ops.json_op(call))
        return result

    def stale_check(self, checkpoint_id: str, files: Sequence[Mapping[str, Any]]) -> Any:
        """``POST /v1/checkpoints/:id/stale-check``: which of these files changed after the checkpoint."""
        return _run(self._transport, ops.json_op(ops.staleness(checkpoint_id, files)))


class Tasks(_Resource):
    """``client.tasks``: a task's state, purging it, and its audit trail."""

    def get(self, task_id: str) -> TaskInfo:
        """``GET /v1/tasks/:taskId``."""
        result: TaskInfo = _run(self._transport, ops.json_op(Call("GET", f"/v1/tasks/{segment(task_id)}")))
        return result

    def set_state(
        self, task_id: str, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> TaskInfo:
        """``PUT /v1/tasks/:taskId/state``: working, input-required, auth-required, completed, failed, canceled."""
        call = Call("PUT", f"/v1/tasks/{segment(task_id)}/state", body=request, idempotency_key=idempotency_key)
        result: TaskInfo = _run(self._transport, ops.json_op(call))
        return result

    def purge(self, task_id: str, *, idempotency_key: str | None = None) -> None:
        """``DELETE /v1/tasks/:taskId``: every checkpoint of the task; the audit chain keeps a tombstone."""
        self._transport.send(Call("DELETE", f"/v1/tasks/{segment(task_id)}", idempotency_key=idempotency_key))

    def audit(self, task_id: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """``GET /v1/tasks/:taskId/audit``: one page of hash-chained entries, oldest first."""
        call = Call("GET", f"/v1/tasks/{segment(task_id)}/audit", query={"limit": limit, "cursor": cursor})
        result: Page = _run(self._transport, ops.json_op(call))
        return result

    def verify_audit(self, task_id: str) -> ChainCheck:
        """``GET /v1/tasks/:taskId/audit/verify``: ``ok``, the entries checked, and the first broken one."""
        call = Call("GET", f"/v1/tasks/{segment(task_id)}/audit/verify")
        result: ChainCheck = _run(self._transport, ops.json_op(call))
        return result


class Handoffs(_Resource):
    """``client.handoffs``: hand a task off from a checkpoint; a fresh agent acknowledges it and gets the lease."""

    def start(
        self, checkpoint_id: str, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> HandoffStarted:
        """``POST /v1/checkpoints/:id/handoff``: the final checkpoint (phase ``handoff``) and AGENT_HANDOFF."""
        return _run(self._transport, ops.handoff_start(self._book, checkpoint_id, request, idempotency_key))

    def get(self, handoff_id: str) -> Any:
        """``GET /v1/handoffs/:id``: pending, then acknowledged."""
        return _run(self._transport, ops.json_op(Call("GET", f"/v1/handoffs/{segment(handoff_id)}")))

    def ack(
        self, handoff_id: str, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> HandoffAcknowledged:
        """``POST /v1/handoffs/:id/ack``: the child checkpoint to resume from, and the lease (remembered)."""
        return _run(self._transport, ops.handoff_ack(self._book, handoff_id, request, idempotency_key))


class Leases(_Resource):
    """``client.leases``: the epoch of a lease held is sent as ``Baton-Lease-Epoch`` on writes to its task."""

    def acquire(
        self, task_id: str, *, agent_id: str, ttl_ms: int | None = None, idempotency_key: str | None = None
    ) -> LeaseView:
        """``POST /v1/tasks/:taskId/lease``: 409 ``lease_held`` while another agent holds a live one."""
        body: dict[str, Any] = {"agentId": agent_id} if ttl_ms is None else {"agentId": agent_id, "ttlMs": ttl_ms}
        return _run(self._transport, ops.lease_acquire(self._book, task_id, body, idempotency_key))

    def renew(self, lease_id: str, ttl_ms: int | None = None, *, idempotency_key: str | None = None) -> LeaseView:
        """``POST /v1/leases/:id/renew``: its own TTL again, or ``ttl_ms``."""
        return _run(self._transport, ops.lease_renew(self._book, lease_id, ttl_ms, idempotency_key))

    def release(self, lease_id: str, *, idempotency_key: str | None = None) -> LeaseView:
        """``POST /v1/leases/:id/release``: this client stops sending the lease's epoch."""
        return _run(self._transport, ops.lease_release(self._book, lease_id, idempotency_key))


class Recoveries(_Resource):
    """``client.recoveries``: a task's recovery point, starting and completing a recovery, an admin's unblock."""

    def point(self, task_id: str) -> RecoveryPoint:
        """``GET /v1/tasks/:taskId/recovery-point``: the newest checkpoint that verifies."""
        return _run(self._transport, ops.recovery_point(self._book, task_id))

    def start(
        self, task_id: str, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> RecoveryStarted:
        """``POST /v1/tasks/:taskId/recoveries``: ``initiated``, or ``blocked`` by the circuit breaker."""
        return _run(self._transport, ops.recovery_start(self._book, task_id, request, idempotency_key))

    def get(self, recovery_id: str) -> Any:
        """``GET /v1/recoveries/:id``."""
        return _run(self._transport, ops.json_op(Call("GET", f"/v1/recoveries/{segment(recovery_id)}")))

    def complete(
        self, recovery_id: str, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> RecoveryCompleted:
        """``POST /v1/recoveries/:id/complete``: the recovering agent takes the task with a new lease."""
        return _run(self._transport, ops.recovery_complete(self._book, recovery_id, request, idempotency_key))

    def unblock(self, task_id: str, reason: str | None = None, *, idempotency_key: str | None = None) -> TaskInfo:
        """``POST /v1/tasks/:taskId/unblock`` (admin): the breaker closes and the task may be recovered again."""
        body = {} if reason is None else {"reason": reason}
        call = Call("POST", f"/v1/tasks/{segment(task_id)}/unblock", body=body, idempotency_key=idempotency_key)
        result: TaskInfo = _run(self._transport, ops.json_op(call))
        return result


class Events(_Resource):
    """``client.events``: pages of CloudEvents after a cursor, and the live feed."""

    def page(
        self, *, types: Sequence[str] | None = None, after: str | None = None, limit: int | None = None
    ) -> Page:
        """``GET /v1/events``: the events after ``after``, oldest first; pass ``nextCursor`` as ``after`` to read on."""
        query: dict[str, Any] = {"after": after, "types": ",".join(types) if types else None, "limit": limit}
        result: Page = _run(self._transport, ops.json_op(Call("GET", "/v1/events", query=query)))
        return result

    def stream(
        self,
        *,
        types: Sequence[str] | None = None,
        after: str | None = None,
        reconnects: int | None = None,
        idle_timeout: float = 45.0,
    ) -> Iterator[StoredEvent]:
        """
        The live feed (``Accept: text/event-stream``): every event committed
        after ``after`` (the present when absent), across reconnections, each
        resumed with ``Last-Event-ID``; leave the loop to close it.
        """
        return _event_stream(self._transport, types, after, reconnects, idle_timeout)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
