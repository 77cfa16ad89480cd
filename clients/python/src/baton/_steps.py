"""Adapter logic written once, run with either client.

An adapter method is a generator yielding ``Do`` steps (one client call
each: ``fn(client)``) and receiving their results; a ``BatonError`` is
thrown back into it. ``run_sync`` runs it with ``baton.Client``; ``run``
with ``baton.AsyncClient`` (awaiting each call) or, given a sync client,
in a worker thread, so an async framework can use either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from ._client import AsyncClient
from ._errors import BatonError

T = TypeVar("T")


@dataclass
class Do:
    fn: Callable[[Any], Any]


Steps = Generator[Do, Any, T]


def run_sync(client: Any, gen: Steps[T]) -> T:
    value: Any = None
    error: BatonError | None = None
    while True:
        try:
            step = gen.throw(error) if error is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            value = step.fn(client)
        except BatonError as refused:
            error = refused


async def run(client: Any, gen: Steps[T]) -> T:
    if not isinstance(client, AsyncClient):
        return await asyncio.to_thread(run_sync, client, gen)
    value: Any = None
    error: BatonError | None = None
    while True:
        try:
            step = gen.throw(error) if error is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            value = await step.fn(client)
        except BatonError as refused:
            error = refused
