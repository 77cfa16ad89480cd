"""What the sync ``BatonSaver`` and the async ``AsyncBatonSaver`` share: the whole of their logic.

Each saver method is written once here as a generator that yields the
steps it needs (``Do``: one client call; ``Begin``/``Wait``: a put in
flight and writes waiting for it; ``Item``: a tuple ``list`` hands out) and
receives their results. ``BatonSaver`` runs the steps with ``baton.Client``,
``AsyncBatonSaver`` with ``baton.AsyncClient``: their methods have the same
names, so one lambda serves both.

Pending writes live inside their checkpoint and join it by a JSON Merge
Patch with If-Match, read again on ``version_conflict``, so two writers
never lose each other's. LangGraph may send a step's writes before the
step's checkpoint is written (its puts queue behind each other, its writes
do not): writes for a checkpoint this process is putting wait for that put.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from typing_extensions import Self

from baton import BatonError

from .record import (
    EMPTY,
    EXTENSION,
    LABEL_ID,
    LABEL_NS,
    LABEL_PARENT,
    dump,
    label_text,
    labels_of,
    load,
    metadata_label,
    ordered_writes,
    record_of,
    record_or_none,
    write_key,
)

T = TypeVar("T")

#: Search results read per request.
PAGE = 100
#: Tries of one pending write when other writers keep changing its checkpoint first.
WRITE_ATTEMPTS = 50
#: Baton checkpoints kept in memory: the blobs and index in them never change once written.
CACHE_ENTRIES = 2000
#: How long writes wait for the put of their checkpoint (seconds) before they look it up once more.
EARLY_WAIT = 30.0


@dataclass
class Do:
    """One call of the client: ``fn(client)`` (its result awaited by the async saver)."""

    fn: Callable[[Any], Any]


@dataclass
class Begin:
    """A put of checkpoint ``key`` starts: writes to it wait until it ends."""

    key: str


@dataclass
class Wait:
    """Waits for the put of checkpoint ``key``, if one is coming, up to ``EARLY_WAIT``."""

    key: str


@dataclass
class Item:
    value: CheckpointTuple


Step = Do | Begin | Wait | Item
Steps = Generator[Step, Any, T]


def _create(body: dict[str, Any]) -> Callable[[Any], Any]:
    return lambda c: c.checkpoints.create(body)


def _patch(doc_id: str, patch: dict[str, Any], version: int) -> Callable[[Any], Any]:
    return lambda c: c.checkpoints.patch(doc_id, patch, if_match=version)


def _get(doc_id: str) -> Callable[[Any], Any]:
    return lambda c: c.checkpoints.get(doc_id)


def where(config: RunnableConfig, method: str) -> tuple[str, str]:
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise ValueError(f"{method} needs configurable.thread_id.")
    return str(thread_id), str(configurable.get("checkpoint_ns") or "")


class BaseBatonSaver(BaseCheckpointSaver[str]):
    """The layout and logic of the Baton savers; use ``BatonSaver`` or ``AsyncBatonSaver``."""

    def __init__(
        self,
        client: Any,
        *,
        agent_id: str = "langgraph",
        task_prefix: str = "langgraph:",
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.client = client
        self.agent_id = agent_id
        self.task_prefix = task_prefix
        self._docs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._ids: OrderedDict[str, str] = OrderedDict()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        """Versions as LangGraph's own savers make them: a zero-padded counter and a random tail."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # The methods, as steps.

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Steps[RunnableConfig]:
        thread_id, ns = where(config, "put")
        task_id = self.task_prefix + thread_id
        key = self._key(task_id, ns, checkpoint["id"])
        yield Begin(key)
        parent_id = config["configurable"].get("checkpoint_id")
        parent = (yield from self._find(task_id, ns, parent_id)) if parent_id else None
        rest = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values", {})  # type: ignore[assignment]
        blobs: dict[str, Any] = {}
        index: dict[str, Any] = {}
        for channel, version in new_versions.items():
            blobs[channel] = dump(self.serde, values[channel]) if channel in values else [EMPTY, ""]
            index[channel] = [None, version]
        # A channel this checkpoint did not change keeps the value stored with an ancestor at the same version.
        parent_index = record_of(parent)["index"] if parent else {}
        for channel, version in checkpoint["channel_versions"].items():
            ref = parent_index.get(channel)
            if channel not in index and ref is not None and ref[1] == version:
                index[channel] = [ref[0] or parent["id"], version]  # type: ignore[index]
        merged = get_checkpoint_metadata(config, metadata)
        record = {
            "checkpoint": dump(self.serde, {**rest, "channel_values": {}}),
            "metadata": dump(self.serde, merged),
            "blobs": blobs,
            "index": index,
        }
        body: dict[str, Any] = {
            "taskId": task_id,
            "agentId": self.agent_id,
            "labels": labels_of(checkpoint["id"], ns, parent_id, merged),
            "extensions": {EXTENSION: record},
        }
        if parent:
            body["parentId"] = parent["id"]
        doc = yield Do(lambda c: c.checkpoints.create(body))
        self._remember(doc, ns, checkpoint["id"])
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> Steps[None]:
        thread_id, ns = where(config, "put_writes")
        checkpoint_id = config["configurable"].get("checkpoint_id")
        if not checkpoint_id:
            raise ValueError("put_writes needs configurable.checkpoint_id.")
        baton_task = self.task_prefix + thread_id
        entries: list[tuple[str, list[Any], bool]] = []
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            # Special writes (negative indexes) replace the earlier one; ordinary ones are kept as first written.
            entries.append((write_key(task_id, idx), [task_id, channel, dump(self.serde, value), task_path], idx < 0))
        key = self._key(baton_task, ns, checkpoint_id)
        known = self._ids.get(key)
        current = self._docs.get(known) if known else None
        waited = False
        for _ in range(WRITE_ATTEMPTS):
            if current is None:
                current = yield from self._find(baton_task, ns, checkpoint_id, fresh=True)
            if current is None:
                if waited:
                    raise ValueError("put_writes names a checkpoint that does not exist.")
                yield Wait(key)
                waited = True
                continue
            existing = record_of(current).get("writes") or {}
            added = {k: write for k, write, replace in entries if replace or k not in existing}
            if not added:
                return None
            doc_id, version = current["id"], current["version"]
            patch = {"extensions": {EXTENSION: {"writes": added}}}
            try:
                doc = yield Do(_patch(doc_id, patch, version))
            except BatonError as error:
                if error.code != "version_conflict":
                    raise
                current = yield Do(_get(doc_id))
                continue
            self._remember(doc, ns, checkpoint_id)
            return None
        raise RuntimeError("The checkpoint changed under every attempt to add pending writes to it; try again.")

    def _get_tuple(self, config: RunnableConfig) -> Steps[CheckpointTuple | None]:
        configurable = config.get("configurable") or {}
        if configurable.get("thread_id") is None:
            return None
        thread_id = str(configurable["thread_id"])
        ns = str(configurable.get("checkpoint_ns") or "")
        task_id = self.task_prefix + thread_id
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            doc = yield from self._find(task_id, ns, checkpoint_id, fresh=True)
        else:
            doc = yield from self._first({"task_id": task_id}, {LABEL_NS: ns}, lambda _: True)
        if doc is None:
            return None
        return (yield from self._tuple_of(doc, thread_id, ns))

    def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Steps[None]:
        configurable = (config or {}).get("configurable") or {}
        thread_id = configurable.get("thread_id")
        ns = configurable.get("checkpoint_ns")
        checkpoint_id = configurable.get("checkpoint_id")
        before_id = get_checkpoint_id(before) if before else None
        labels: dict[str, Any] = {}
        if checkpoint_id:
            labels[LABEL_ID] = checkpoint_id
        if ns is not None:
            labels[LABEL_NS] = ns
        for key, value in (filter or {}).items():
            label = metadata_label(key, value)
            if label is not None:
                labels[label[0]] = label_text(label[1])
        query: dict[str, Any] = {"agent_id": self.agent_id}
        if thread_id is not None:
            query["task_id"] = self.task_prefix + str(thread_id)
        left = limit
        cursor: str | None = None
        while True:
            # A limit asks for no more than it needs (the filters below may pass over some: then it pages on).
            size = PAGE if left is None else max(1, min(PAGE, left))
            page = {**query, "limit": size, **({"cursor": cursor} if cursor else {})}
            items, cursor = yield from self._search(page, labels)
            for doc in items:
                if left is not None and left <= 0:
                    return None
                if not doc["taskId"].startswith(self.task_prefix) or record_or_none(doc) is None:
                    continue
                if before_id is not None and str(doc["labels"][LABEL_ID]) >= before_id:
                    continue
                thread = doc["taskId"][len(self.task_prefix) :]
                tup = yield from self._tuple_of(doc, thread, str(doc["labels"][LABEL_NS]))
                # Labels narrow the search; the exact comparison is LangGraph's own.
                if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):  # type: ignore[misc]
                    continue
                if left is not None:
                    left -= 1
                yield Item(tup)
            if not cursor or (left is not None and left <= 0):
                return None

    def _delete_thread(self, thread_id: str) -> Steps[None]:
        task_id = self.task_prefix + str(thread_id)
        try:
            yield Do(lambda c: c.tasks.purge(task_id))
        except BatonError as error:
            # A thread that was never written is already gone.
            if error.status != 404:
                raise
        self._forget_task(task_id)
        return None

    def _copy_thread(self, source_thread_id: str, target_thread_id: str) -> Steps[None]:
        docs = yield from self._task_docs(self.task_prefix + str(source_thread_id))
        records = yield from self._standalone(docs)
        yield from self._write_back(self.task_prefix + str(target_thread_id), docs, records, purge=False)
        return None

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> Steps[None]:
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"Unknown prune strategy {strategy!r}: keep_latest or delete.")
        for thread_id in thread_ids:
            task_id = self.task_prefix + str(thread_id)
            if strategy == "delete":
                yield from self._delete_thread(str(thread_id))
                continue
            docs = yield from self._task_docs(task_id)
            newest: dict[str, dict[str, Any]] = {}
            for doc in reversed(docs):
                newest[str(doc["labels"][LABEL_NS])] = doc
            if len(newest) == len(docs):
                continue
            kept = [doc for doc in docs if newest.get(str(doc["labels"][LABEL_NS])) is doc]
            yield from self._rewrite(task_id, kept)
        return None

    def _delete_for_runs(self, run_ids: Sequence[str]) -> Steps[None]:
        doomed = {str(run_id) for run_id in run_ids}
        tasks: list[str] = []
        for run_id in doomed:
            cursor: str | None = None
            while True:
                page = {"agent_id": self.agent_id, "limit": PAGE, **({"cursor": cursor} if cursor else {})}
                items, cursor = yield from self._search(page, {"lg.meta.run_id": run_id})
                for doc in items:
                    if doc["taskId"].startswith(self.task_prefix) and doc["taskId"] not in tasks:
                        tasks.append(doc["taskId"])
                if not cursor:
                    break
        for task_id in tasks:
            docs = yield from self._task_docs(task_id)
            kept = [d for d in docs if str(d["labels"].get("lg.meta.run_id")) not in doomed]
            yield from self._rewrite(task_id, kept)
        return None

    # Rewriting a thread: Baton removes whole tasks, so a thread losing some checkpoints is written again.

    def _rewrite(self, task_id: str, kept: list[dict[str, Any]]) -> Steps[None]:
        """
        Purges the task and writes back ``kept`` (newest first), each made
        self-contained first, so no kept checkpoint refers to a removed one
        for a channel value. Everything is read before anything is removed;
        a process that dies between the purge and the last write loses the
        checkpoints not yet written back (docs/python.md).
        """
        records = yield from self._standalone(kept)
        yield from self._write_back(task_id, kept, records, purge=True)
        return None

    def _task_docs(self, task_id: str) -> Steps[list[dict[str, Any]]]:
        docs: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = {
                "agent_id": self.agent_id,
                "task_id": task_id,
                "limit": PAGE,
                **({"cursor": cursor} if cursor else {}),
            }
            items, cursor = yield from self._search(page, {})
            docs.extend(doc for doc in items if record_or_none(doc) is not None)
            if not cursor:
                return docs

    def _standalone(self, docs: list[dict[str, Any]]) -> Steps[list[dict[str, Any]]]:
        """Each checkpoint's record with every channel value it refers to copied in, bytes unchanged."""
        records = []
        for doc in docs:
            record = record_of(doc)
            blobs: dict[str, Any] = {}
            index: dict[str, Any] = {}
            for channel, (holder, version) in record["index"].items():
                source = record if holder is None else record_of((yield from self._by_id(holder)))
                if channel in source["blobs"]:
                    blobs[channel] = source["blobs"][channel]
                    index[channel] = [None, version]
            records.append({**record, "blobs": blobs, "index": index})
        return records

    def _write_back(
        self, task_id: str, docs: list[dict[str, Any]], records: list[dict[str, Any]], purge: bool
    ) -> Steps[None]:
        if purge:
            try:
                yield Do(lambda c: c.tasks.purge(task_id))
            except BatonError as error:
                if error.status != 404:
                    raise
            self._forget_task(task_id)
        written: dict[tuple[str, str], str] = {}
        # Oldest first, so the thread's order (newest first) is what it was.
        for doc, record in reversed(list(zip(docs, records, strict=True))):
            labels = dict(doc["labels"])
            ns, checkpoint_id = str(labels[LABEL_NS]), str(labels[LABEL_ID])
            body: dict[str, Any] = {
                "taskId": task_id,
                "agentId": self.agent_id,
                "labels": labels,
                "extensions": {EXTENSION: record},
            }
            parent = written.get((ns, str(labels.get(LABEL_PARENT))))
            if parent is not None:
                body["parentId"] = parent
            created = yield Do(_create(body))
            written[(ns, checkpoint_id)] = created["id"]
            self._remember(created, ns, checkpoint_id)
        return None

    # Shared reads.

    def _search(
        self, query: Mapping[str, Any], labels: Mapping[str, Any]
    ) -> Steps[tuple[list[dict[str, Any]], str | None]]:
        """One page of matches, newest first, and the cursor of the next (a page may be empty)."""
        q = dict(query)
        page = yield Do(lambda c: c.checkpoints.search(labels=dict(labels), **q))
        return page["items"], page.get("nextCursor")

    def _first(
        self, query: Mapping[str, Any], labels: Mapping[str, Any], accept: Callable[[dict[str, Any]], bool]
    ) -> Steps[dict[str, Any] | None]:
        cursor: str | None = None
        while True:
            q = {**query, "limit": query.get("limit", 1)}
            if cursor:
                q["cursor"] = cursor
            items, cursor = yield from self._search(q, labels)
            for doc in items:
                if accept(doc) and record_or_none(doc) is not None:
                    return doc
            if not cursor:
                return None

    def _find(self, task_id: str, ns: str, checkpoint_id: str, fresh: bool = False) -> Steps[dict[str, Any] | None]:
        """The Baton checkpoint of LangGraph checkpoint ``checkpoint_id``; ``fresh`` reads past the cache."""
        if not fresh:
            known = self._ids.get(self._key(task_id, ns, checkpoint_id))
            if known is not None and known in self._docs:
                return self._docs[known]
        # The id label leads, so the search walks the index of that one id rather than the whole task.
        doc = yield from self._first(
            {"agent_id": self.agent_id},
            {LABEL_ID: checkpoint_id, LABEL_NS: ns},
            lambda d: d["taskId"] == task_id,
        )
        if doc is not None:
            self._remember(doc, ns, checkpoint_id)
        return doc

    def _by_id(self, doc_id: str) -> Steps[dict[str, Any]]:
        cached = self._docs.get(doc_id)
        if cached is not None:
            return cached
        doc: dict[str, Any] = yield Do(lambda c: c.checkpoints.get(doc_id))
        self._cache(doc)
        return doc

    def _tuple_of(self, doc: dict[str, Any], thread_id: str, ns: str) -> Steps[CheckpointTuple]:
        """The LangGraph tuple of a Baton checkpoint: channel values gathered from where they were written."""
        record = record_of(doc)
        checkpoint = load(self.serde, record["checkpoint"])
        values: dict[str, Any] = {}
        for channel, (holder, _version) in record["index"].items():
            blobs = record["blobs"] if holder is None else record_of((yield from self._by_id(holder)))["blobs"]
            blob = blobs.get(channel)
            if blob is not None and blob[0] != EMPTY:
                values[channel] = load(self.serde, blob)
        checkpoint["channel_values"] = values
        pending = [(w[0], w[1], load(self.serde, w[2])) for w in ordered_writes(record.get("writes") or {})]
        parent_id = doc["labels"].get(LABEL_PARENT)
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}},
            checkpoint=checkpoint,
            metadata=load(self.serde, record["metadata"]),
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent_id}}
                if parent_id is not None
                else None
            ),
            pending_writes=pending,
        )

    # Caches.

    @staticmethod
    def _key(task_id: str, ns: str, checkpoint_id: str) -> str:
        return f"{task_id}\0{ns}\0{checkpoint_id}"

    def _cache(self, doc: dict[str, Any]) -> None:
        self._docs.pop(doc["id"], None)
        self._docs[doc["id"]] = doc
        while len(self._docs) > CACHE_ENTRIES:
            self._docs.popitem(last=False)

    def _remember(self, doc: dict[str, Any], ns: str, checkpoint_id: str) -> None:
        self._cache(doc)
        key = self._key(doc["taskId"], ns, checkpoint_id)
        self._ids.pop(key, None)
        self._ids[key] = doc["id"]
        while len(self._ids) > CACHE_ENTRIES:
            self._ids.popitem(last=False)

    def _forget_task(self, task_id: str) -> None:
        for key in [k for k in self._ids if k.startswith(task_id + "\0")]:
            del self._ids[key]
        for doc_id in [d for d, doc in self._docs.items() if doc["taskId"] == task_id]:
            del self._docs[doc_id]
