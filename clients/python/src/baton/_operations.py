"""Every route of the client, written once.

Each operation is a generator that yields the ``Call`` s it needs and
receives their ``Answer`` s; ``Client`` runs it with the sync transport and
``AsyncClient`` with the async one, so both have the same behaviour by
construction. A refusal is thrown back into the generator, which may handle
it (``fence_checkpoint`` does) or let it through.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any, TypeVar, cast

from ._errors import BatonError
from ._lease_book import LeaseBook
from ._transport import Answer, Call, segment
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
    TaskInfo,
    VerifiedCheckpoint,
)

T = TypeVar("T")
Op = Generator[Call, Answer, T]

MERGE_PATCH = "application/merge-patch+json"


def task_hint(task_id: str) -> dict[str, str]:
    """``Baton-Task-Id``: the write's task, a routing hint for a balancer in front of a fleet (docs/fleet.md)."""
    return {"baton-task-id": segment(task_id)}


def fence_task(book: LeaseBook, task_id: str) -> dict[str, str]:
    return {**book.headers(task_id), **task_hint(task_id)}


def fence_checkpoint(book: LeaseBook, checkpoint_id: str) -> Op[dict[str, str]]:
    """
    The ``Baton-Lease-Epoch`` header of a write to a checkpoint. When this
    client holds a lease but has not seen the checkpoint, it reads it first
    to learn its task: sending no epoch would be refused (428) while the
    lease is live, and guessing one would defeat fencing.
    """
    task_id = book.task_of(checkpoint_id)
    if not book.holds_any():
        return {} if task_id is None else task_hint(task_id)
    if task_id is None:
        try:
            checkpoint = cast(Checkpoint, (yield Call("GET", f"/v1/checkpoints/{segment(checkpoint_id)}")).json())
        except BatonError as error:
            # The write itself will get the service's answer (404, corrupt, ...); the lookup adds nothing.
            if error.status < 500:
                return {}
            raise
        book.saw(checkpoint)
        task_id = checkpoint["taskId"]
    return fence_task(book, task_id)


def json_op(call: Call) -> Op[Any]:
    return (yield call).json()


def _seen(book: LeaseBook, checkpoint: Checkpoint) -> Checkpoint:
    book.saw(checkpoint)
    return checkpoint


def _seen_all(book: LeaseBook, page: CheckpointPage) -> CheckpointPage:
    for checkpoint in page["items"]:
        book.saw(checkpoint)
    return page


def _page(limit: int | None, cursor: str | None) -> dict[str, Any]:
    return {"limit": limit, "cursor": cursor}


# checkpoints


def create(book: LeaseBook, body: CheckpointInput, key: str | None, traceparent: str | None) -> Op[Checkpoint]:
    headers = fence_task(book, str(body.get("taskId", "")))
    call = Call("POST", "/v1/checkpoints", body=body, headers=headers, idempotency_key=key, traceparent=traceparent)
    return _seen(book, (yield call).json())


def get(book: LeaseBook, checkpoint_id: str, version: int | None = None) -> Op[Checkpoint]:
    call = Call("GET", f"/v1/checkpoints/{segment(checkpoint_id)}", query={"version": version})
    return _seen(book, (yield call).json())


def patch(
    book: LeaseBook, checkpoint_id: str, body: Mapping[str, Any], if_match: int, key: str | None
) -> Op[Checkpoint]:
    headers = {**(yield from fence_checkpoint(book, checkpoint_id)), "if-match": f'"{if_match}"'}
    call = Call(
        "PATCH",
        f"/v1/checkpoints/{segment(checkpoint_id)}",
        body=body,
        content_type=MERGE_PATCH,
        headers=headers,
        idempotency_key=key,
    )
    return _seen(book, (yield call).json())


def finalize(
    book: LeaseBook, checkpoint_id: str, body: Mapping[str, Any], if_match: int | None, key: str | None
) -> Op[Checkpoint]:
    headers = dict((yield from fence_checkpoint(book, checkpoint_id)))
    if if_match is not None:
        headers["if-match"] = f'"{if_match}"'
    call = Call(
        "POST", f"/v1/checkpoints/{segment(checkpoint_id)}/finalize", body=body, headers=headers, idempotency_key=key
    )
    return _seen(book, (yield call).json())


def link(book: LeaseBook, parent_id: str, child_id: str, key: str | None) -> Op[LinkResult]:
    headers = yield from fence_checkpoint(book, child_id)
    call = Call(
        "POST",
        f"/v1/checkpoints/{segment(parent_id)}/links",
        body={"childId": child_id},
        headers=headers,
        idempotency_key=key,
    )
    result = cast(LinkResult, (yield call).json())
    book.saw(result["child"])
    return result


def search(book: LeaseBook, query: Mapping[str, Any], labels: Mapping[str, Any] | None) -> Op[CheckpointPage]:
    params = {name: value for name, value in query.items() if value is not None}
    for name, value in (labels or {}).items():
        params[f"label.{name}"] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return _seen_all(book, (yield Call("GET", "/v1/checkpoints", query=params)).json())


def history(book: LeaseBook, task_id: str, limit: int | None, cursor: str | None) -> Op[CheckpointPage]:
    call = Call("GET", f"/v1/tasks/{segment(task_id)}/checkpoints", query=_page(limit, cursor))
    return _seen_all(book, (yield call).json())


def latest(book: LeaseBook, task_id: str) -> Op[VerifiedCheckpoint]:
    answer = yield Call("GET", f"/v1/tasks/{segment(task_id)}/checkpoints/latest")
    skipped = answer.headers.get("baton-skipped-corrupt")
    return {"checkpoint": _seen(book, answer.json()), "skipped": skipped.split(",") if skipped else []}


def staleness(checkpoint_id: str, files: Sequence[Mapping[str, Any]]) -> Call:
    return Call("POST", f"/v1/checkpoints/{segment(checkpoint_id)}/stale-check", body={"files": list(files)})


# handoffs


def handoff_start(book: LeaseBook, checkpoint_id: str, body: Mapping[str, Any], key: str | None) -> Op[HandoffStarted]:
    headers = yield from fence_checkpoint(book, checkpoint_id)
    call = Call(
        "POST", f"/v1/checkpoints/{segment(checkpoint_id)}/handoff", body=body, headers=headers, idempotency_key=key
    )
    started = cast(HandoffStarted, (yield call).json())
    book.saw(started["checkpoint"])
    return started


def handoff_ack(book: LeaseBook, handoff_id: str, body: Mapping[str, Any], key: str | None) -> Op[HandoffAcknowledged]:
    call = Call("POST", f"/v1/handoffs/{segment(handoff_id)}/ack", body=body, idempotency_key=key)
    acknowledged = cast(HandoffAcknowledged, (yield call).json())
    book.saw(acknowledged["checkpoint"])
    book.hold(acknowledged["lease"])
    return acknowledged


# leases


def lease_acquire(book: LeaseBook, task_id: str, body: Mapping[str, Any], key: str | None) -> Op[LeaseView]:
    call = Call("POST", f"/v1/tasks/{segment(task_id)}/lease", body=body, idempotency_key=key)
    lease = cast(LeaseView, (yield call).json())
    book.hold(lease)
    return lease


def lease_renew(book: LeaseBook, lease_id: str, ttl_ms: int | None, key: str | None) -> Op[LeaseView]:
    body = {} if ttl_ms is None else {"ttlMs": ttl_ms}
    call = Call("POST", f"/v1/leases/{segment(lease_id)}/renew", body=body, idempotency_key=key)
    lease = cast(LeaseView, (yield call).json())
    book.hold(lease)
    return lease


def lease_release(book: LeaseBook, lease_id: str, key: str | None) -> Op[LeaseView]:
    call = Call("POST", f"/v1/leases/{segment(lease_id)}/release", idempotency_key=key)
    lease = cast(LeaseView, (yield call).json())
    book.release(lease)
    return lease


# recoveries


def recovery_point(book: LeaseBook, task_id: str) -> Op[RecoveryPoint]:
    point = cast(RecoveryPoint, (yield Call("GET", f"/v1/tasks/{segment(task_id)}/recovery-point")).json())
    book.saw(point["checkpoint"])
    return point


def recovery_start(book: LeaseBook, task_id: str, body: Mapping[str, Any], key: str | None) -> Op[RecoveryStarted]:
    call = Call("POST", f"/v1/tasks/{segment(task_id)}/recoveries", body=body, idempotency_key=key)
    started = cast(RecoveryStarted, (yield call).json())
    book.saw(started["checkpoint"])
    return started


def recovery_complete(
    book: LeaseBook, recovery_id: str, body: Mapping[str, Any], key: str | None
) -> Op[RecoveryCompleted]:
    call = Call("POST", f"/v1/recoveries/{segment(recovery_id)}/complete", body=body, idempotency_key=key)
    completed = cast(RecoveryCompleted, (yield call).json())
    book.hold(completed["lease"])
    return completed


__all__ = [
    "Call",
    "segment",
    "ChainCheck",
    "Op",
    "Page",
    "ResumePrompt",
    "TaskInfo",
    "json_op",
]
