"""One logical call to the service, over as many attempts as it takes.

A call is described once (``Call``) and sent by a sync or an async
``Transport``: the URL, the token, the headers, the Idempotency-Key minted
once per call and sent with every attempt (the service answers a repeated
key with its first answer, so a retried write never applies twice), the
retries with backoff to a deadline, and the problem document of a refusal.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from ._errors import BatonError, error_from_answer, unexpected
from ._retry import RetryPolicy, Schedule, is_retriable_status, parse_retry_after

Token = str | Callable[[], str]
AsyncToken = str | Callable[[], str] | Callable[[], Awaitable[str]]
Query = dict[str, str | int | float | bool | None]

_NO_BODY = object()


@dataclass
class Call:
    method: str
    #: From ``/v1/...``, its variable parts already encoded (``segment``).
    path: str
    query: Query | None = None
    body: Any = _NO_BODY
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None
    traceparent: str | None = None


@dataclass
class Answer:
    status: int
    headers: httpx.Headers
    text: str

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            raise unexpected(self.status, "The service answered with a body that is not JSON.", self.text) from None


def segment(value: str) -> str:
    """One path segment, encoded as JavaScript's ``encodeURIComponent`` does (task ids may hold ``/``, ``?``, spaces)."""
    return quote(value, safe="!'()*-._~")


def query_params(query: Query | None) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, value in (query or {}).items():
        if value is None:
            continue
        params[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return params


def base_url(url: str) -> str:
    if not url.lower().startswith(("http://", "https://")):
        raise ValueError("base_url must be an http:// or https:// URL.")
    return url.rstrip("/")


def _prepare(call: Call) -> tuple[dict[str, str], bytes | None]:
    headers = {"accept": "application/json", **call.headers}
    if call.method != "GET":
        headers["idempotency-key"] = call.idempotency_key or str(uuid.uuid4())
    if call.traceparent:
        headers["traceparent"] = call.traceparent
    content: bytes | None = None
    if call.body is not _NO_BODY:
        content = json.dumps(call.body, separators=(",", ":"), ensure_ascii=False).encode()
        headers["content-type"] = call.content_type
    return headers, content


def _retry_after(response: httpx.Response) -> float | None:
    return parse_retry_after(response.headers.get("retry-after"))


class Transport:
    """Sends calls with an ``httpx.Client``: retries, backoff and the deadline live here and nowhere else."""

    def __init__(self, http: httpx.Client, url: str, token: Token | None, retry: RetryPolicy) -> None:
        self.http = http
        self.base = base_url(url)
        self.token = token
        self.retry = retry

    def authorization(self) -> dict[str, str]:
        if self.token is None:
            return {}
        return {"authorization": f"Bearer {self.token() if callable(self.token) else self.token}"}

    def send(self, call: Call) -> Answer:
        headers, content = _prepare(call)
        params = query_params(call.query)
        schedule = Schedule(self.retry)
        while True:
            try:
                response = self.http.request(
                    call.method,
                    self.base + call.path,
                    params=params,
                    headers={**headers, **self.authorization()},
                    content=content,
                    follow_redirects=False,
                )
            except httpx.TransportError:
                # It may or may not have reached the service; the same Idempotency-Key makes sending it again safe.
                wait = schedule.next_wait()
                if wait is None:
                    raise
                time.sleep(wait)
                continue
            answer = Answer(response.status_code, response.headers, response.text)
            if response.is_success:
                return answer
            wait = schedule.next_wait(_retry_after(response)) if is_retriable_status(response.status_code) else None
            if wait is None:
                raise error_from_answer(answer.status, response.headers.get("content-type", ""), answer.text)
            time.sleep(wait)


class AsyncTransport:
    """The async twin of ``Transport``, with an ``httpx.AsyncClient``."""

    def __init__(self, http: httpx.AsyncClient, url: str, token: AsyncToken | None, retry: RetryPolicy) -> None:
        self.http = http
        self.base = base_url(url)
        self.token = token
        self.retry = retry

    async def authorization(self) -> dict[str, str]:
        if self.token is None:
            return {}
        value: Any = self.token() if callable(self.token) else self.token
        if isinstance(value, Awaitable):
            value = await value
        return {"authorization": f"Bearer {value}"}

    async def send(self, call: Call) -> Answer:
        headers, content = _prepare(call)
        params = query_params(call.query)
        schedule = Schedule(self.retry)
        while True:
            try:
                response = await self.http.request(
                    call.method,
                    self.base + call.path,
                    params=params,
                    headers={**headers, **(await self.authorization())},
                    content=content,
                    follow_redirects=False,
                )
            except httpx.TransportError:
                wait = schedule.next_wait()
                if wait is None:
                    raise
                await asyncio.sleep(wait)
                continue
            answer = Answer(response.status_code, response.headers, response.text)
            if response.is_success:
                return answer
            wait = schedule.next_wait(_retry_after(response)) if is_retriable_status(response.status_code) else None
            if wait is None:
                raise error_from_answer(answer.status, response.headers.get("content-type", ""), answer.text)
            await asyncio.sleep(wait)


__all__ = ["Answer", "AsyncTransport", "BatonError", "Call", "Transport", "segment"]
