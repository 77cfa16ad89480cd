"""How a LangGraph checkpoint is laid out in a Baton checkpoint: the pure half of the savers.

The same layout as the TypeScript ``BatonSaver`` (``src/langgraph/record.ts``,
docs/langgraph.md): a thread is the Baton task ``task_prefix + thread_id``;
each LangGraph checkpoint is one Baton checkpoint whose
``extensions.langgraph`` holds every ``serde.dumps_typed`` value as
``[type, base64]``, opaque to Baton, and whose labels (``lg.id``, ``lg.ns``,
``lg.parent``, ``lg.meta.*``) make it findable. Python's serializer writes
MessagePack that LangGraph.js cannot read, so a thread is read back by the
language that wrote it (docs/python.md).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

#: Serializer output: its type tag and its bytes as base64.
Blob = list[str]
#: One pending write: task id, channel, value, task path.
StoredWrite = list[Any]

EMPTY = "empty"
EXTENSION = "langgraph"
LABEL_ID, LABEL_NS, LABEL_PARENT, LABEL_META = "lg.id", "lg.ns", "lg.parent", "lg.meta."
_LABEL_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,100}$")
_LABEL_VALUE_MAX = 1000


def dump(serde: SerializerProtocol, value: Any) -> Blob:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode("ascii")]


def load(serde: SerializerProtocol, blob: Blob) -> Any:
    return serde.loads_typed((blob[0], base64.b64decode(blob[1])))


def metadata_label(key: str, value: Any) -> tuple[str, str | int | float | bool] | None:
    """The label a metadata entry is searchable by, or None when Baton cannot index it (then it is filtered here)."""
    name = LABEL_META + key
    if not _LABEL_NAME.match(name):
        return None
    if isinstance(value, bool):
        return name, value
    if isinstance(value, int | float) and math.isfinite(value):
        return name, value
    if isinstance(value, str) and len(value) <= _LABEL_VALUE_MAX:
        return name, value
    return None


def labels_of(checkpoint_id: str, ns: str, parent_id: str | None, metadata: Mapping[str, Any]) -> dict[str, Any]:
    labels: dict[str, Any] = {LABEL_ID: checkpoint_id, LABEL_NS: ns}
    if parent_id is not None:
        labels[LABEL_PARENT] = parent_id
    for key, value in (metadata or {}).items():
        label = metadata_label(key, value)
        if label is not None:
            labels[label[0]] = label[1]
    return labels


def label_text(value: Any) -> str:
    """A label value as a search filter sends it (JavaScript's ``String(value)``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def write_key(task_id: str, idx: int) -> str:
    """LangGraph's index of a write: special channels (errors, interrupts, ...) have fixed negative ones."""
    return f"{task_id},{idx}"


def ordered_writes(writes: Mapping[str, StoredWrite]) -> list[StoredWrite]:
    """Pending writes in LangGraph's order: task path, task id, index."""
    entries = [(write, int(key.rsplit(",", 1)[1])) for key, write in writes.items()]
    entries.sort(key=lambda entry: (entry[0][3], entry[0][0], entry[1]))
    return [write for write, _ in entries]


def record_or_none(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    record = (doc.get("extensions") or {}).get(EXTENSION)
    return record if isinstance(record, dict) and isinstance(record.get("checkpoint"), list) else None


def record_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    record = record_or_none(doc)
    if record is None:
        raise ValueError("The Baton checkpoint holds no LangGraph checkpoint.")
    return record
