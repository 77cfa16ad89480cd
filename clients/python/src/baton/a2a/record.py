"""How an A2A task sits in a Baton checkpoint: the TypeScript store's layout (``src/a2a/record.ts``).

Labels scope and find it (``a2a.kind``, ``a2a.scope`` = tenant and owner as
JSON text, ``a2a.id``, ``a2a.context``, ``a2a.state``, ``a2a.updated`` in
milliseconds, ``a2a.protocol``); the task itself is the SDK's ProtoJSON
(``MessageToDict``) as text under ``extensions.a2a.task``, so either SDK
reads what the other wrote.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from a2a.types.a2a_pb2 import Task, TaskState
from google.protobuf.json_format import MessageToDict, ParseDict

EXTENSION = "a2a"
LABEL_KIND, LABEL_SCOPE, LABEL_ID, LABEL_CONTEXT = "a2a.kind", "a2a.scope", "a2a.id", "a2a.context"
LABEL_STATE, LABEL_UPDATED, LABEL_PROTOCOL = "a2a.state", "a2a.updated", "a2a.protocol"
KIND_TASK, KIND_DELETED = "task", "deleted"
#: The protocol version the tasks are written in, as the TypeScript store labels them.
PROTOCOL_VERSION = "1.0"

_BATON_STATES = {
    TaskState.TASK_STATE_SUBMITTED: "working",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_REJECTED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def scope_label(tenant: str, owner: str) -> str:
    """Tenant and owner as one label value, as JavaScript's ``JSON.stringify`` writes them; hashed past 1,000 chars."""
    text = json.dumps([tenant, owner], separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= 1000 else f"sha256:{sha256(text)}"


def status_time(task: Task) -> int:
    """The status time in milliseconds since the epoch; 0 when the task has none."""
    if not task.HasField("status") or not task.status.HasField("timestamp"):
        return 0
    return int(task.status.timestamp.ToMilliseconds())


def baton_state(task: Task) -> str | None:
    """The Baton task state an A2A state is (Baton's states are A2A's words)."""
    return _BATON_STATES.get(task.status.state) if task.HasField("status") else None


def state_name(task: Task) -> str | None:
    if not task.HasField("status"):
        return None
    return str(TaskState.Name(task.status.state))


def checkpoint_of(task_id: str, agent_id: str, scope: str, task: Task) -> dict[str, Any]:
    """The checkpoint body of a save: the task, and what a person reading Baton wants to see of it."""
    state = baton_state(task)
    said = " ".join(part.text for part in task.status.message.parts if part.HasField("text")).strip()
    execution: dict[str, Any] = {
        "phase": "complete" if state in ("completed", "failed", "canceled") else "implementing"
    }
    if said:
        execution["currentFocus"] = said[:2000]
    labels: dict[str, Any] = {
        LABEL_KIND: KIND_TASK,
        LABEL_SCOPE: scope,
        LABEL_ID: task.id[:1000],
        LABEL_CONTEXT: task.context_id[:1000],
        LABEL_UPDATED: status_time(task),
        LABEL_PROTOCOL: PROTOCOL_VERSION,
    }
    name = state_name(task)
    if name is not None:
        labels[LABEL_STATE] = name
    text = json.dumps(MessageToDict(task), separators=(",", ":"), ensure_ascii=False)
    return {
        "taskId": task_id,
        "agentId": agent_id,
        "executionState": execution,
        "labels": labels,
        "extensions": {EXTENSION: {"task": text}},
    }


def patch_of(body: dict[str, Any]) -> dict[str, Any]:
    """A save as a JSON Merge Patch: the task replaced whole, labels and summary rewritten."""
    labels = dict(body["labels"])
    labels.setdefault(LABEL_STATE, None)
    return {
        "executionState": {
            "phase": body["executionState"]["phase"],
            "currentFocus": body["executionState"].get("currentFocus"),
        },
        "labels": labels,
        "extensions": body["extensions"],
    }


def task_of(doc: dict[str, Any]) -> Task:
    """A fresh task from its checkpoint (the SDK changes what a store returns, so every read makes a new one)."""
    record = (doc.get("extensions") or {}).get(EXTENSION) or {}
    if not isinstance(record.get("task"), str):
        raise ValueError(f"checkpoint {doc['id']} holds no A2A task")
    task = Task()
    ParseDict(json.loads(record["task"]), task, ignore_unknown_fields=True)
    return task
