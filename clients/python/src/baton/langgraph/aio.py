"""``AsyncBatonSaver``: the async LangGraph checkpointer over ``baton.AsyncClient``.

The same logic and layout as ``BatonSaver`` (``base.py``). Its sync methods
may be called from another thread while its event loop runs (as LangGraph
does for a sync ``invoke`` of a graph compiled with an async saver); they
hand the work to that loop, as ``AsyncPostgresSaver`` does.

    from baton import AsyncClient
    from baton.langgraph import AsyncBatonSaver

    saver = AsyncBatonSaver(client=AsyncClient("http://127.0.0.1:7070", token="..."))
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Generator, Iterator, Sequence
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from baton import AsyncClient, BatonError

from .base import CACHE_ENTRIES, EARLY_WAIT, BaseBatonSaver, Begin, Do, Item, Step, Wait

T = TypeVar("T")


class AsyncBatonSaver(BaseBatonSaver):
    client: AsyncClient

    def __init__(
        self,
        client: AsyncClient,
        *,
        agent_id: str = "langgraph",
        task_prefix: str = "langgraph:",
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(client, agent_id=agent_id, task_prefix=task_prefix, serde=serde)
        self._puts: OrderedDict[str, asyncio.Event] = OrderedDict()
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    def _put_event(self, key: str) -> asyncio.Event:
        event = self._puts.get(key)
        if event is None:
            event = self._puts[key] = asyncio.Event()
            while len(self._puts) > CACHE_ENTRIES:
                self._puts.popitem(last=False)
        return event

    async def _steps(self, gen: Generator[Step, Any, Any], out: list[Any]) -> AsyncGenerator[CheckpointTuple, None]:
        """Runs the steps of ``gen`` with the client, handing out ``Item`` s; its return value goes in ``out``."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        begun: list[asyncio.Event] = []
        value: Any = None
        error: BatonError | None = None
        try:
            while True:
                try:
                    step = gen.throw(error) if error is not None else gen.send(value)
                except StopIteration as stop:
                    out.append(stop.value)
                    return
                value, error = None, None
                if isinstance(step, Do):
                    try:
                        value = await step.fn(self.client)
                    except BatonError as refused:
                        error = refused
                elif isinstance(step, Begin):
                    begun.append(self._put_event(step.key))
                elif isinstance(step, Wait):
                    try:
                        await asyncio.wait_for(self._put_event(step.key).wait(), EARLY_WAIT)
                    except asyncio.TimeoutError:
                        pass
                elif isinstance(step, Item):
                    yield step.value
        finally:
            gen.close()
            for event in begun:
                event.set()

    async def _run(self, gen: Generator[Step, Any, T]) -> T:
        out: list[Any] = []
        async for _ in self._steps(gen, out):
            pass
        return out[0]  # type: ignore[no-any-return]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._run(self._put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._run(self._put_writes(config, writes, task_id, task_path))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._run(self._get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for tup in self._steps(self._list(config, filter, before, limit), []):
            yield tup

    async def adelete_thread(self, thread_id: str) -> None:
        await self._run(self._delete_thread(thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._run(self._copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._run(self._prune(thread_ids, strategy))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._run(self._delete_for_runs(run_ids))

    # The sync methods, from a thread other than the loop's.

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        try:
            if asyncio.get_running_loop() is self.loop:
                coroutine.close()
                raise asyncio.InvalidStateError(
                    "Synchronous calls to AsyncBatonSaver are only allowed from a different thread; "
                    "from the main thread, use the async interface (ainvoke, astream, aget_state) or BatonSaver."
                )
        except RuntimeError:
            pass
        if self.loop is None:
            coroutine.close()
            raise asyncio.InvalidStateError("AsyncBatonSaver has no event loop yet: create it inside one.")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._call(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._call(self.aput_writes(config, writes, task_id, task_path))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._call(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        yield from self._call(collect())

    def delete_thread(self, thread_id: str) -> None:
        self._call(self.adelete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._call(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._call(self.aprune(thread_ids, strategy=strategy))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._call(self.adelete_for_runs(run_ids))
