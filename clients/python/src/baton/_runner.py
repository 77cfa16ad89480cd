"""Runs an operation (``_operations``) with a sync or an async transport."""

from __future__ import annotations

from typing import TypeVar

from ._errors import BatonError
from ._operations import Op
from ._transport import AsyncTransport, Transport

T = TypeVar("T")


def run(transport: Transport, op: Op[T]) -> T:
    try:
        call = next(op)
        while True:
            try:
                answer = transport.send(call)
            except BatonError as error:
                call = op.throw(error)
                continue
            call = op.send(answer)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def arun(transport: AsyncTransport, op: Op[T]) -> T:
    try:
        call = next(op)
        while True:
            try:
                answer = await transport.send(call)
            except BatonError as error:
                call = op.throw(error)
                continue
            call = op.send(answer)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
