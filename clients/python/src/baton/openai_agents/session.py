"""``BatonSession``: the OpenAI Agents SDK's ``Session`` (conversation history) kept in Baton.

The session is a Baton task whose id is the session id; its history lives
in segment checkpoints (``record.py``) laid out as the TypeScript
``BatonSession`` lays them out, so either language reads a session the
other wrote. Every change is one JSON Merge Patch of the newest segment with
If-Match, worked out again on ``version_conflict``, so a change is atomic
and writers in different processes never lose each other's items.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from agents.exceptions import UserError
from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings, coerce_session_settings, resolve_session_limit

from baton import AsyncClient, BatonError, Client
from baton._steps import Do, Steps, run

from .record import (
    EMPTY,
    EXTENSION,
    KIND_SESSION,
    LABEL_KIND,
    CorruptedError,
    count,
    decode_item,
    encode_item,
    segment_items,
    session_of,
    splice,
)

#: How large (bytes of JSON) the head grows before a new segment takes over.
DEFAULT_SEGMENT_BYTES = 64 * 1024
#: Tries of one change when other writers keep getting there first.
ATTEMPTS = 50
#: Sealed segments kept in memory; they never change.
CACHED_SEGMENTS = 1000

Plan = Callable[[dict[str, Any] | None, dict[str, Any]], Steps[tuple[dict[str, Any] | None, Any]]]


class BatonSession(SessionABC):
    """
    ``BatonSession(client=..., session_id=...)``: ``client`` is a
    ``baton.AsyncClient`` or a ``baton.Client`` (whose calls then run in a
    worker thread, so the session serves ``Runner.run_sync`` loops too).
    Every method takes the SDK's ``wrapper=`` context form; the history is
    the session's whatever the context.
    """

    def __init__(
        self,
        client: AsyncClient | Client,
        session_id: str | None = None,
        *,
        agent_id: str = "openai-agents",
        task_id: str | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    ) -> None:
        self.client = client
        self.session_id = session_id or str(uuid.uuid4())
        #: The Baton task holding the history: the session id unless told otherwise.
        self.task_id = task_id or self.session_id
        self.agent_id = agent_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self.segment_bytes = segment_bytes
        self._head: dict[str, Any] | None = None
        self._sealed: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._start_after: str | None = None

    async def get_items(self, limit: int | None = None, *, wrapper: Any = None) -> list[Any]:
        return await run(self.client, self._get_items(resolve_session_limit(limit, self.session_settings)))

    async def add_items(self, items: list[Any], *, wrapper: Any = None) -> None:
        if not items:
            return
        stored = [encode_item(item) for item in items]

        def plan(head: dict[str, Any] | None, record: dict[str, Any]) -> Steps[tuple[dict[str, Any] | None, Any]]:
            return (splice(record, count(record), stored), None)
            yield  # a generator, as every plan

        await run(self.client, self._change(plan))

    async def pop_item(self, *, wrapper: Any = None) -> Any | None:
        def plan(head: dict[str, Any] | None, record: dict[str, Any]) -> Steps[tuple[dict[str, Any] | None, Any]]:
            total = count(record)
            if total == 0:
                return None, None
            last = yield from self._tail(record, 1)
            return splice(record, total - 1, []), last[0]

        popped = await run(self.client, self._change(plan))
        return None if popped is None else decode_item(popped)

    async def clear_session(self, *, wrapper: Any = None) -> None:
        def plan(head: dict[str, Any] | None, record: dict[str, Any]) -> Steps[tuple[dict[str, Any] | None, Any]]:
            if head is None:
                return None, None
            # Applied operations go too: a cleared session starts afresh.
            return {"prior": [], "items": None, "ops": None}, None
            yield

        await run(self.client, self._change(plan))

    # Steps.

    def _get_items(self, limit: int | None) -> Steps[list[Any]]:
        if limit is not None and limit <= 0:
            return []
        head = yield from self._read()
        record = session_of(head) if head else EMPTY
        assert record is not None
        stored = (yield from self._all(record)) if limit is None else (yield from self._tail(record, limit))
        return [decode_item(item) for item in stored]

    def _read(self) -> Steps[dict[str, Any] | None]:
        """The newest segment, read now."""
        page = yield Do(
            lambda c: c.checkpoints.search(task_id=self.task_id, labels={LABEL_KIND: KIND_SESSION}, limit=1)
        )
        if page.get("corrupted"):
            raise CorruptedError(f"session {self.session_id}", page["corrupted"])
        head = next((doc for doc in page["items"] if session_of(doc) is not None), None)
        self._head = head if head is not None and head["status"] != "finalized" else None
        return head

    def _change(self, plan: Plan) -> Steps[Any]:
        """
        Applies a change to the head with If-Match, working it out again
        when another writer got there first; the first segment is made when
        the session has none, a successor when the head is sealed,
        finalized, or has outgrown its budget.
        """
        for attempt in range(ATTEMPTS):
            head = self._head if attempt == 0 and self._head is not None else (yield from self._read())
            if head is None:
                patch, result = yield from plan(None, EMPTY)
                if patch is None:
                    return result
                yield from self._start()
                continue
            record = session_of(head)
            assert record is not None
            if head["status"] == "finalized" and head.get("finalStatus") == "handoff":
                raise UserError(
                    "The session's Baton task is being handed off; the agent that acknowledges the handoff "
                    "writes to it next."
                )
            if head["status"] == "finalized" or record.get("sealed"):
                yield from self._succeed(head, record)
                continue
            if len(json.dumps(record.get("items") or {}, separators=(",", ":"))) > self.segment_bytes:
                if (yield from self._patch(head, {"sealed": True})):
                    assert self._head is not None
                    yield from self._succeed(self._head, session_of(self._head) or record)
                continue
            patch, result = yield from plan(head, record)
            if patch is None:
                return result
            if (yield from self._patch(head, patch)):
                return result
        raise UserError("The Baton session changed under every attempt to write to it; try again.")

    def _patch(self, head: dict[str, Any], patch: dict[str, Any]) -> Steps[bool]:
        doc_id, version = head["id"], head["version"]
        body = {"extensions": {EXTENSION: patch}}
        try:
            self._head = yield Do(lambda c: c.checkpoints.patch(doc_id, body, if_match=version))
            return True
        except BatonError as error:
            self._head = None
            if error.code in ("version_conflict", "checkpoint_finalized"):
                return False
            raise

    def _key_prefix(self) -> str:
        # Idempotency-Keys are visible ASCII of at most 255 characters: the task id goes in as its SHA-256.
        return "baton-session:" + hashlib.sha256(self.task_id.encode()).hexdigest()

    def _start(self) -> Steps[None]:
        """The first segment, keyed on the session, so writers that start it together make one."""
        key = f"{self._key_prefix()}:start" + (f":{self._start_after}" if self._start_after else "")
        created = yield from self._create({**EMPTY, "items": {}, "ops": {}}, None, key)
        if created is not None and (yield from self._read()) is None:
            # The key's first answer was a segment since purged with its task: the next key follows from its id.
            self._start_after = created["id"]
        return None

    def _succeed(self, head: dict[str, Any], record: dict[str, Any]) -> Steps[None]:
        """The successor of a sealed or finalized segment, keyed on it, so writers who find it together make one."""
        own = segment_items(record)
        prior = [*record.get("prior", []), [head["id"], len(own)]] if own else list(record.get("prior", []))
        following = {
            "kind": KIND_SESSION,
            "prior": prior,
            "items": {},
            "next": record.get("next", 0),
            "ops": record.get("ops") or {},
        }
        if own:
            self._remember(head["id"], own)
        yield from self._create(following, head["id"], f"{self._key_prefix()}:after:{head['id']}")
        return None

    def _create(self, record: dict[str, Any], parent_id: str | None, key: str) -> Steps[dict[str, Any] | None]:
        body: dict[str, Any] = {
            "taskId": self.task_id,
            "agentId": self.agent_id,
            "labels": {LABEL_KIND: KIND_SESSION},
            "extensions": {EXTENSION: record},
        }
        if parent_id is not None:
            body["parentId"] = parent_id
        try:
            created: dict[str, Any] = yield Do(lambda c: c.checkpoints.create(body, idempotency_key=key))
            return created
        except BatonError as error:
            # Another writer made it first, with another agent id: the next read finds theirs.
            if error.code == "idempotency_key_reused":
                return None
            raise
        finally:
            self._head = None

    def _all(self, record: dict[str, Any]) -> Steps[list[dict[str, Any]]]:
        out: list[dict[str, Any]] = []
        for doc_id, n in record.get("prior") or []:
            out.extend((yield from self._segment(doc_id))[:n])
        out.extend(segment_items(record))
        return out

    def _tail(self, record: dict[str, Any], limit: int) -> Steps[list[dict[str, Any]]]:
        """The last ``limit`` items, reading only the segments they are in."""
        out = segment_items(record)[-limit:]
        for doc_id, n in reversed(record.get("prior") or []):
            if len(out) >= limit:
                break
            items = (yield from self._segment(doc_id))[:n]
            out = items[max(0, len(items) - (limit - len(out))) :] + out
        return out

    def _segment(self, doc_id: str) -> Steps[list[dict[str, Any]]]:
        """A sealed segment's items; one that compaction removed (410) holds none any more."""
        cached = self._sealed.get(doc_id)
        if cached is not None:
            return cached
        try:
            doc = yield Do(lambda c: c.checkpoints.get(doc_id))
            record = session_of(doc)
            items = segment_items(record) if record else []
        except BatonError as error:
            if error.code != "checkpoint_compacted":
                raise
            items = []
        self._remember(doc_id, items)
        return items

    def _remember(self, doc_id: str, items: list[dict[str, Any]]) -> None:
        self._sealed[doc_id] = items
        while len(self._sealed) > CACHED_SEGMENTS:
            self._sealed.popitem(last=False)
