"""Retries, backoff, Retry-After, the deadline and the Idempotency-Key, with ``httpx.MockTransport``."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from baton import AsyncClient, BatonError, Client, RetryPolicy
from baton._retry import backoff_delay, parse_retry_after

FAST = RetryPolicy(retries=3, base=0.001, max_wait=0.002)
CHECKPOINT = {"id": "c1", "taskId": "t1", "version": 1}
PROBLEM = {"type": "about:blank", "title": "Busy", "status": 503, "code": "store_unavailable", "detail": "Try again."}


def answers(*responses: httpx.Response) -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return queue.pop(0)

    return seen, httpx.MockTransport(handler)


def problem(status: int, code: str, **headers: str) -> httpx.Response:
    body = {**PROBLEM, "status": status, "code": code}
    return httpx.Response(status, json=body, headers={"content-type": "application/problem+json", **headers})


def test_a_write_retried_after_503_and_429_keeps_one_idempotency_key() -> None:
    seen, transport = answers(
        problem(503, "store_unavailable"), problem(429, "rate_limited"), httpx.Response(201, json=CHECKPOINT)
    )
    with Client("http://baton.test", token="t", retry=FAST, http=httpx.Client(transport=transport)) as client:
        assert client.checkpoints.create({"taskId": "t1", "agentId": "a"})["id"] == "c1"
    keys = {request.headers["idempotency-key"] for request in seen}
    assert len(seen) == 3 and len(keys) == 1
    assert seen[0].headers["authorization"] == "Bearer t"
    assert seen[0].headers["baton-task-id"] == "t1"
    assert json.loads(seen[0].content) == {"taskId": "t1", "agentId": "a"}


def test_two_logical_writes_have_two_keys() -> None:
    seen, transport = answers(httpx.Response(201, json=CHECKPOINT), httpx.Response(201, json=CHECKPOINT))
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        client.checkpoints.create({"taskId": "t1", "agentId": "a"})
        client.checkpoints.create({"taskId": "t1", "agentId": "a"})
    assert seen[0].headers["idempotency-key"] != seen[1].headers["idempotency-key"]


def test_a_connection_error_is_retried_and_raised_when_retries_run_out() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("refused", request=request)

    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=httpx.MockTransport(handler))) as client:
        with pytest.raises(httpx.ConnectError):
            client.checkpoints.get("c1")
    assert calls == 4


def test_the_last_retriable_refusal_surfaces_as_baton_error() -> None:
    _, transport = answers(*[problem(503, "store_unavailable") for _ in range(4)])
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError) as raised:
            client.checkpoints.get("c1")
    assert (raised.value.status, raised.value.code, raised.value.detail) == (503, "store_unavailable", "Try again.")


def test_a_4xx_is_never_retried() -> None:
    seen, transport = answers(problem(409, "lease_held"))
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError) as raised:
            client.leases.acquire("t1", agent_id="a")
    assert raised.value.code == "lease_held" and len(seen) == 1


def test_retry_after_is_honoured() -> None:
    seen, transport = answers(problem(503, "queue_full", **{"retry-after": "1"}), httpx.Response(200, json=CHECKPOINT))
    started = time.monotonic()
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        client.checkpoints.get("c1")
    assert time.monotonic() - started >= 0.95 and len(seen) == 2


def test_a_retry_after_past_the_limit_or_the_deadline_ends_the_retries() -> None:
    policy = RetryPolicy(retries=5, base=0.001, max_wait=0.002, max_retry_after=2, deadline=30)
    _, transport = answers(problem(503, "queue_full", **{"retry-after": "3"}))
    with Client("http://baton.test", retry=policy, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError):
            client.checkpoints.get("c1")
    policy = RetryPolicy(retries=5, base=0.001, max_wait=0.002, deadline=0.5)
    _, transport = answers(problem(503, "queue_full", **{"retry-after": "1"}))
    started = time.monotonic()
    with Client("http://baton.test", retry=policy, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError):
            client.checkpoints.get("c1")
    assert time.monotonic() - started < 0.5


def test_an_answer_without_a_problem_document_is_unexpected_response() -> None:
    _, transport = answers(httpx.Response(404, text="<html>nope</html>", headers={"content-type": "text/html"}))
    with Client("http://baton.test", retry=FAST, http=httpx.Client(transport=transport)) as client:
        with pytest.raises(BatonError) as raised:
            client.checkpoints.get("c1")
    assert raised.value.code == "unexpected_response" and raised.value.status == 404


def test_backoff_is_full_jitter_under_an_exponential_cap() -> None:
    policy = RetryPolicy(base=0.1, max_wait=5)
    assert backoff_delay(0, policy, 0.999) < 0.1
    assert backoff_delay(3, policy, 0.5) == pytest.approx(0.4)
    assert backoff_delay(20, policy, 1.0) == 5


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("7") == 7
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470) == 10
    assert parse_retry_after("-1") is None and parse_retry_after(None) is None


async def test_the_async_client_retries_the_same_way() -> None:
    seen, transport = answers(problem(503, "store_unavailable"), httpx.Response(201, json=CHECKPOINT))
    async with AsyncClient("http://baton.test", retry=FAST, http=httpx.AsyncClient(transport=transport)) as client:
        assert (await client.checkpoints.create({"taskId": "t1", "agentId": "a"}))["id"] == "c1"
    assert seen[0].headers["idempotency-key"] == seen[1].headers["idempotency-key"]


def test_the_sync_resources_are_made_from_the_async_ones() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "make_sync.py"
    assert subprocess.run([sys.executable, str(script), "--check"]).returncode == 0
