"""The event stream's reconnection, with ``httpx.MockTransport``: Last-Event-ID, retry:, refusals."""

from __future__ import annotations

import json

import httpx
import pytest

from baton import AsyncClient, BatonError, Client, RetryPolicy

FAST = RetryPolicy(base=0.001, max_wait=0.002)


def frame(cursor: str, n: int) -> str:
    return f"id: {cursor}\r\ndata: {json.dumps({'id': f'e{n}', 'type': 'CHECKPOINT_CREATED', 'data': {}})}\r\n\r\n"


def stream_of(*bodies: str | int) -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []
    queue = list(bodies)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = queue.pop(0)
        if isinstance(body, int):
            problem = {"type": "about:blank", "title": "x", "status": body, "code": "c", "detail": "d"}
            return httpx.Response(body, json=problem, headers={"content-type": "application/problem+json"})
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    return seen, httpx.MockTransport(handler)


def test_a_dropped_stream_resumes_after_the_last_event_handed_out() -> None:
    # The first connection ends after two events and half a third (dropped, as the standard says).
    first = ": heartbeat\n\n" + frame("c1", 1) + frame("c2", 2) + 'id: c3\ndata: {"id":'
    seen, transport = stream_of(first, 503, "retry: 1\n\n" + frame("c3", 3) + frame("c4", 4))
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        events = []
        for event in client.events.stream(types=["CHECKPOINT_CREATED"], after="c0"):
            events.append(event)
            if len(events) == 4:
                break
    assert [e["cursor"] for e in events] == ["c1", "c2", "c3", "c4"]
    assert [r.headers.get("last-event-id") for r in seen] == ["c0", "c2", "c2"]
    assert seen[0].url.params["types"] == "CHECKPOINT_CREATED"
    assert seen[0].headers["accept"] == "text/event-stream"


def test_a_refusal_that_retrying_cannot_mend_ends_the_stream() -> None:
    _, transport = stream_of(400)
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError) as raised:
            next(iter(client.events.stream(after="bogus")))
    assert raised.value.status == 400


def test_reconnects_are_bounded_when_asked() -> None:
    _, transport = stream_of(503, 503, 503)
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError):
            next(iter(client.events.stream(reconnects=2)))


async def test_the_async_stream_resumes_the_same_way() -> None:
    seen, transport = stream_of(frame("c1", 1), frame("c2", 2))
    async with AsyncClient("http://baton.test", retry=FAST, http=httpx.AsyncClient(transport=transport)) as client:
        events = []
        async for event in client.events.stream():
            events.append(event)
            if len(events) == 2:
                break
    assert [e["cursor"] for e in events] == ["c1", "c2"]
    assert [r.headers.get("last-event-id") for r in seen] == [None, "c1"]
