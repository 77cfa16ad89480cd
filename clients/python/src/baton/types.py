"""What the client sends and gets back, as TypedDicts named as the TypeScript client names them.

Answers are plain ``dict`` objects (JSON as the service sent it): the types
name the members programs read; members not listed are still there. The
service's OpenAPI document (``GET /openapi.json``) is the full contract.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from typing_extensions import NotRequired

JSON = dict[str, Any]

TaskState = Literal["submitted", "working", "input-required", "auth-required", "completed", "failed", "canceled"]


class Checkpoint(TypedDict):
    id: str
    taskId: str
    agentId: str
    agentType: NotRequired[str]
    iteration: int
    codeVersion: NotRequired[str]
    schemaVersion: str
    status: str
    finalStatus: NotRequired[str]
    version: int
    createdAt: str
    updatedAt: str
    finalizedAt: NotRequired[str]
    parentId: NotRequired[str]
    executionState: JSON
    contextSummary: JSON
    metrics: JSON
    recovery: JSON
    compliance: JSON
    labels: dict[str, str | int | float | bool]
    extensions: JSON


class CheckpointInput(TypedDict, total=False):
    """The body of ``POST /v1/checkpoints``: ``taskId`` and ``agentId`` are required."""

    taskId: str
    agentId: str
    agentType: str
    iteration: int
    codeVersion: str
    parentId: str
    executionState: JSON
    contextSummary: JSON
    metrics: JSON
    recovery: JSON
    compliance: JSON
    labels: dict[str, str | int | float | bool]
    extensions: JSON


class CheckpointPage(TypedDict):
    items: list[Checkpoint]
    nextCursor: NotRequired[str]
    #: Ids skipped because they failed verification.
    corrupted: NotRequired[list[str]]


class Page(TypedDict):
    items: list[JSON]
    nextCursor: NotRequired[str]


class VerifiedCheckpoint(TypedDict):
    checkpoint: Checkpoint
    #: Ids of newer checkpoints that failed verification and were passed over.
    skipped: list[str]


class RecoveryPoint(TypedDict):
    taskId: str
    checkpoint: Checkpoint
    skipped: list[str]


class LinkResult(TypedDict):
    parentId: str
    childId: str
    child: Checkpoint


class LeaseView(TypedDict):
    leaseId: str
    taskId: str
    agentId: str
    epoch: int
    ttlMs: int
    acquiredAt: str
    expiresAt: str
    status: str
    endedAt: NotRequired[str]


class HandoffStarted(TypedDict):
    handoff: JSON
    checkpoint: Checkpoint
    continuationPrompt: str | None


class HandoffAcknowledged(TypedDict):
    handoff: JSON
    checkpoint: Checkpoint
    lease: LeaseView


class RecoveryStarted(TypedDict):
    recovery: JSON
    checkpoint: Checkpoint | None
    continuationPrompt: str | None


class RecoveryCompleted(TypedDict):
    recovery: JSON
    lease: LeaseView


class ResumePrompt(TypedDict):
    checkpointId: str
    version: int
    text: str
    tokens: int
    budget: int | None
    dropped: list[str]


class ChainCheck(TypedDict):
    ok: bool
    entries: int
    firstBrokenSeq: NotRequired[int]


class TaskInfo(TypedDict):
    taskId: str
    state: JSON
    finished: bool
    paused: bool
    success: bool
    lease: JSON | None
    epoch: int
    latestCheckpointId: str | None
    recoveryPointId: str | None
    openHandoff: JSON | None
    blocked: JSON | None
    checkpoints: int


class StoredEvent(TypedDict):
    """A CloudEvents 1.0 event, with ``cursor``: where it sits in the stream."""

    specversion: str
    id: str
    source: str
    type: str
    time: str
    subject: NotRequired[str]
    data: JSON
    cursor: str
