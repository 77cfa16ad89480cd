"""``Client`` and ``AsyncClient``: the typed client of Baton's HTTP API.

One instance per agent: it remembers the lease epochs that agent holds and
sends them on its writes. Resources are attributes (``client.checkpoints``,
``client.tasks``, ``client.handoffs``, ``client.leases``,
``client.recoveries``, ``client.events``), with the same methods in both.
The HTTP client is injectable (``http=``), so tests can pass an
``httpx.MockTransport``; nothing is global.
"""

from __future__ import annotations

from types import TracebackType

import httpx

from . import _async_resources as aio
from . import _sync_resources as sync
from ._lease_book import LeaseBook
from ._retry import RetryPolicy
from ._transport import AsyncToken, AsyncTransport, Token, Transport

#: One attempt's limits (seconds): connecting, and waiting for each part of the answer.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


class Client:
    """The sync client. ``with Client(base_url, token=...) as client: client.checkpoints.create({...})``."""

    def __init__(
        self,
        base_url: str,
        *,
        token: Token | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        http: httpx.Client | None = None,
    ) -> None:
        self._own_http = http is None
        self._http = http or httpx.Client(timeout=timeout)
        self._book = LeaseBook()
        transport = Transport(self._http, base_url, token, retry or RetryPolicy())
        self.base_url = transport.base
        self.checkpoints = sync.Checkpoints(transport, self._book)
        self.tasks = sync.Tasks(transport, self._book)
        self.handoffs = sync.Handoffs(transport, self._book)
        self.leases = sync.Leases(transport, self._book)
        self.recoveries = sync.Recoveries(transport, self._book)
        self.events = sync.Events(transport, self._book)

    def lease_epoch(self, task_id: str) -> int | None:
        """The lease epoch this client sends on writes to ``task_id``, if it holds one."""
        return self._book.epoch(task_id)

    def close(self) -> None:
        if self._own_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class AsyncClient:
    """The async client, the same methods as ``Client``: ``await client.checkpoints.create({...})``."""

    def __init__(
        self,
        base_url: str,
        *,
        token: AsyncToken | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._book = LeaseBook()
        transport = AsyncTransport(self._http, base_url, token, retry or RetryPolicy())
        self.base_url = transport.base
        self.checkpoints = aio.AsyncCheckpoints(transport, self._book)
        self.tasks = aio.AsyncTasks(transport, self._book)
        self.handoffs = aio.AsyncHandoffs(transport, self._book)
        self.leases = aio.AsyncLeases(transport, self._book)
        self.recoveries = aio.AsyncRecoveries(transport, self._book)
        self.events = aio.AsyncEvents(transport, self._book)

    def lease_epoch(self, task_id: str) -> int | None:
        """The lease epoch this client sends on writes to ``task_id``, if it holds one."""
        return self._book.epoch(task_id)

    async def aclose(self) -> None:
        if self._own_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
