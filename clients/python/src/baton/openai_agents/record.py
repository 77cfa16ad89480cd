"""How an OpenAI Agents session and a run state sit in Baton checkpoints.

The TypeScript adapter's layout (``src/openai-agents/record.ts``,
docs/openai-agents.md): a session's history lives in segment checkpoints
labelled ``oa.kind=session`` under ``extensions.openaiAgents``; the newest
segment is the head and takes every write through If-Match; once it
outgrows its budget it is sealed and a successor names it in ``prior``.
Items are kept as ``{"i": item}`` (with ``"b"``, the paths of byte strings
stored as base64), keyed by zero-padded positions.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Mapping
from typing import Any

EXTENSION = "openaiAgents"
LABEL_KIND, LABEL_AGENT, LABEL_INTERRUPTIONS = "oa.kind", "oa.agent", "oa.interruptions"
KIND_SESSION, KIND_RUN_STATE = "session", "run-state"
EMPTY: dict[str, Any] = {"kind": KIND_SESSION, "prior": [], "next": 0}


class CorruptedError(RuntimeError):
    """
    The newest checkpoint a read needs failed Baton's hash check. Answering
    from an older one would silently lose what the newest held, so the
    adapters refuse until it is restored or the task recovered
    (docs/recovery-runbook.md).
    """

    def __init__(self, what: str, checkpoint_ids: list[str]) -> None:
        super().__init__(
            f"The newest checkpoint of {what} failed Baton's hash check ({', '.join(checkpoint_ids)}); "
            "restore it or recover the task before using it."
        )
        self.checkpoint_ids = checkpoint_ids


def item_key(position: int) -> str:
    return str(position).zfill(12)


def session_of(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    record = (doc.get("extensions") or {}).get(EXTENSION)
    return record if isinstance(record, dict) and record.get("kind") == KIND_SESSION else None


def run_state_of(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    record = (doc.get("extensions") or {}).get(EXTENSION)
    return record if isinstance(record, dict) and record.get("kind") == KIND_RUN_STATE else None


def segment_items(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = record.get("items") or {}
    return [items[key] for key in sorted(items)]


def encode_item(item: Any) -> dict[str, Any]:
    """An item in stored form; only what JSON keeps exactly is accepted, plus bytes."""
    paths: list[list[str | int]] = []

    def encode(value: Any, path: list[str | int]) -> Any:
        if value is None or isinstance(value, str | bool | int):
            return value
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise TypeError("A session item holds a number JSON cannot keep (NaN or an infinity).")
            return value
        if isinstance(value, bytes | bytearray):
            paths.append(path)
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, list | tuple):
            return [encode(entry, [*path, i]) for i, entry in enumerate(value)]
        if isinstance(value, Mapping):
            return {str(k): encode(v, [*path, str(k)]) for k, v in value.items()}
        if hasattr(value, "model_dump"):
            return encode(value.model_dump(exclude_unset=True), path)
        raise TypeError(f"A session item holds a value JSON cannot keep ({type(value).__name__}).")

    encoded = encode(item, [])
    return {"i": encoded, "b": paths} if paths else {"i": encoded}


def decode_item(stored: Mapping[str, Any]) -> Any:
    item = copy.deepcopy(stored["i"])
    for path in stored.get("b") or []:
        if not path:
            return base64.b64decode(item)
        parent = item
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = base64.b64decode(parent[path[-1]])
    return item


def canonical_text(value: Any) -> str:
    """JSON with sorted keys: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def count(record: Mapping[str, Any]) -> int:
    return int(sum(n for _, n in record.get("prior") or [])) + len(record.get("items") or {})


def splice(record: Mapping[str, Any], keep: int, append: list[dict[str, Any]]) -> dict[str, Any]:
    """
    The patch of the head that keeps the first ``keep`` items of the history
    and adds ``append`` after them: items removed from the head are set to
    null, earlier segments give up their last items by a lower count.
    """
    keys = sorted(record.get("items") or {})
    items: dict[str, Any] = {}
    patch: dict[str, Any] = {"items": items}
    remove = count(record) - keep
    for key in keys[max(0, len(keys) - remove) :]:
        items[key] = None
    remove -= min(remove, len(keys))
    if remove > 0:
        prior = [[doc_id, n] for doc_id, n in record.get("prior") or []]
        while remove > 0:
            taken = min(remove, prior[-1][1])
            prior[-1][1] -= taken
            remove -= taken
            if prior[-1][1] == 0:
                prior.pop()
        patch["prior"] = prior
    position = int(record.get("next", 0))
    for item in append:
        items[item_key(position)] = item
        position += 1
    patch["next"] = position
    return patch
