"""The live event feed as an iterator: ``GET /v1/events`` with ``Accept: text/event-stream``.

Frames are parsed as the HTML Living Standard's "Server-sent events" says
(fields, comments, CRLF, ``id``, ``retry``); after a dropped connection the
iterator connects again with ``Last-Event-ID`` set to the last event handed
to the caller, and the service resumes exactly after it, so nothing is
repeated or skipped. Like ``EventSource`` it reconnects until told to stop:
connection errors, 429, 5xx, a stream that ends, and a connection silent
past the idle limit (the service sends a comment every 15 s) lead to a new
connection after a backoff wait; other refusals (401, 400 for an unknown
cursor) end it with a ``BatonError``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ._errors import BatonError, error_from_answer, unexpected
from ._retry import backoff_delay, is_retriable_status, parse_retry_after
from ._transport import AsyncTransport, Transport, query_params
from .types import StoredEvent


@dataclass
class _Parser:
    """Frames from lines; ``retry`` holds the stream's own reconnection time (seconds) once it sends one."""

    id: str | None = None
    data: list[str] = field(default_factory=list)
    retry: float | None = None

    def feed(self, line: str) -> tuple[str | None, str] | None:
        if line == "":
            frame = (self.id, "\n".join(self.data)) if self.data or self.id is not None else None
            self.id, self.data = None, []
            return frame
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.data.append(value)
        elif name == "id" and "\0" not in value:
            self.id = value
        elif name == "retry" and value.isdigit():
            self.retry = int(value) / 1000
        return None


def _event(data: str, cursor: str | None) -> StoredEvent:
    try:
        event: Any = json.loads(data)
    except ValueError:
        raise unexpected(200, "An event on the stream is not JSON.", data) from None
    if cursor is None or not isinstance(event, dict):
        raise unexpected(200, "An event on the stream has no id or is not an object.", data)
    event["cursor"] = cursor
    return event  # type: ignore[return-value]


class _State:
    def __init__(self, types: Sequence[str] | None, after: str | None, reconnects: int | None) -> None:
        self.params = query_params({"types": ",".join(types) if types else None})
        self.last_id = after
        self.max_failures = reconnects
        self.failures = 0
        self.parser = _Parser()

    def headers(self, authorization: dict[str, str]) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "cache-control": "no-cache", **authorization}
        if self.last_id is not None:
            headers["last-event-id"] = self.last_id
        return headers

    def check(self, response: httpx.Response, body: str | None) -> float | None:
        """Raises for a refusal; the Retry-After of a retriable one is returned through the raised error."""
        if response.is_success:
            if not response.headers.get("content-type", "").lower().startswith("text/event-stream"):
                raise unexpected(response.status_code, "The service answered the event stream with another media type.")
            return None
        raise error_from_answer(response.status_code, response.headers.get("content-type", ""), body or "")

    def events(self, lines: Iterable[str]) -> Iterator[StoredEvent]:
        for line in lines:
            frame = self.parser.feed(line)
            if frame is None:
                continue
            if frame[0] is not None:
                self.last_id = frame[0]
            if frame[1] == "":
                continue
            self.failures = 0
            yield _event(frame[1], self.last_id)

    def after_failure(
        self, delivered: bool, failure: BaseException | None, retry_after: float | None, backoff: Any
    ) -> float:
        # The stream ended or broke: connect again after the last event delivered.
        if not delivered:
            self.failures += 1
        if self.max_failures is not None and self.failures > self.max_failures:
            raise failure or unexpected(200, "The event stream kept ending without delivering an event.")
        if retry_after is not None:
            return retry_after
        if self.parser.retry is not None:
            return self.parser.retry
        return float(backoff_delay(max(0, self.failures - 1), backoff))


def _timeout(idle: float) -> httpx.Timeout:
    # The read timeout is the idle limit: a connection silent that long is presumed dead and replaced.
    return httpx.Timeout(connect=10.0, read=idle, write=10.0, pool=10.0)


def event_stream(
    transport: Transport, types: Sequence[str] | None, after: str | None, reconnects: int | None, idle: float
) -> Iterator[StoredEvent]:
    state = _State(types, after, reconnects)
    while True:
        delivered = False
        failure: BaseException | None = None
        retry_after: float | None = None
        state.parser = _Parser(retry=state.parser.retry)
        try:
            headers = state.headers(transport.authorization())
            url = transport.base + "/v1/events"
            with transport.http.stream("GET", url, params=state.params, headers=headers, timeout=_timeout(idle)) as r:
                if not r.is_success:
                    r.read()
                    retry_after = parse_retry_after(r.headers.get("retry-after"))
                state.check(r, r.text if not r.is_success else None)
                for event in state.events(r.iter_lines()):
                    delivered = True
                    yield event
        except BatonError as error:
            if not is_retriable_status(error.status):
                raise
            failure = error
        except httpx.TransportError as error:
            failure = error
        time.sleep(state.after_failure(delivered, failure, retry_after, transport.retry))


async def aevent_stream(
    transport: AsyncTransport, types: Sequence[str] | None, after: str | None, reconnects: int | None, idle: float
) -> AsyncIterator[StoredEvent]:
    state = _State(types, after, reconnects)
    while True:
        delivered = False
        failure: BaseException | None = None
        retry_after: float | None = None
        state.parser = _Parser(retry=state.parser.retry)
        try:
            headers = state.headers(await transport.authorization())
            url = transport.base + "/v1/events"
            async with transport.http.stream(
                "GET", url, params=state.params, headers=headers, timeout=_timeout(idle)
            ) as r:
                if not r.is_success:
                    await r.aread()
                    retry_after = parse_retry_after(r.headers.get("retry-after"))
                state.check(r, r.text if not r.is_success else None)
                async for line in r.aiter_lines():
                    for event in state.events([line]):
                        delivered = True
                        yield event
        except BatonError as error:
            if not is_retriable_status(error.status):
                raise
            failure = error
        except httpx.TransportError as error:
            failure = error
        await asyncio.sleep(state.after_failure(delivered, failure, retry_after, transport.retry))
