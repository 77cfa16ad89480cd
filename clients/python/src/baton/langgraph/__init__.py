"""``BatonSaver``: a LangGraph checkpointer that keeps its checkpoints in Baton, over HTTP.

A thread is the Baton task ``task_prefix + thread_id`` (``langgraph:`` by
default), each checkpoint one Baton checkpoint, laid out as the TypeScript
``BatonSaver`` lays it out (``record.py``). Baton's hashes, audit chain,
events, handoff and recovery apply to it as to any task. The logic lives in
``base.py``; this module runs it with the sync ``baton.Client``, ``aio.py``
with ``baton.AsyncClient``.

    from baton import Client
    from baton.langgraph import BatonSaver

    saver = BatonSaver(client=Client("http://127.0.0.1:7070", token="..."))
    graph = builder.compile(checkpointer=saver)
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from baton import BatonError, Client

from .base import CACHE_ENTRIES, EARLY_WAIT, BaseBatonSaver, Begin, Do, Item, Step, Wait

T = TypeVar("T")

__all__ = ["AsyncBatonSaver", "BaseBatonSaver", "BatonSaver"]


def __getattr__(name: str) -> Any:
    if name == "AsyncBatonSaver":
        from .aio import AsyncBatonSaver

        return AsyncBatonSaver
    raise AttributeError(name)


class BatonSaver(BaseBatonSaver):
    """The sync saver. Its async methods run the sync ones in a worker thread; ``AsyncBatonSaver`` is native."""

    client: Client

    def __init__(
        self,
        client: Client,
        *,
        agent_id: str = "langgraph",
        task_prefix: str = "langgraph:",
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(client, agent_id=agent_id, task_prefix=task_prefix, serde=serde)
        self._puts: OrderedDict[str, threading.Event] = OrderedDict()
        self._lock = threading.Lock()

    def _put_event(self, key: str) -> threading.Event:
        with self._lock:
            event = self._puts.get(key)
            if event is None:
                event = self._puts[key] = threading.Event()
                while len(self._puts) > CACHE_ENTRIES:
                    self._puts.popitem(last=False)
            return event

    def _steps(self, gen: Generator[Step, Any, T]) -> Generator[CheckpointTuple, None, T]:
        """Runs the steps of ``gen`` with the client, handing out ``Item`` s."""
        begun: list[threading.Event] = []
        value: Any = None
        error: BatonError | None = None
        try:
            while True:
                try:
                    step = gen.throw(error) if error is not None else gen.send(value)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                value, error = None, None
                if isinstance(step, Do):
                    try:
                        value = step.fn(self.client)
                    except BatonError as refused:
                        error = refused
                elif isinstance(step, Begin):
                    begun.append(self._put_event(step.key))
                elif isinstance(step, Wait):
                    self._put_event(step.key).wait(EARLY_WAIT)
                elif isinstance(step, Item):
                    yield step.value
        finally:
            gen.close()
            for event in begun:
                event.set()

    def _run(self, gen: Generator[Step, Any, T]) -> T:
        steps = self._steps(gen)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._run(self._put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._run(self._put_writes(config, writes, task_id, task_path))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run(self._get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        yield from self._steps(self._list(config, filter, before, limit))

    def delete_thread(self, thread_id: str) -> None:
        self._run(self._delete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run(self._copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run(self._prune(thread_ids, strategy))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run(self._delete_for_runs(run_ids))

    # The async methods, for graphs run with ainvoke over the sync client.

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for tup in found:
            yield tup

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)
