"""``BatonTaskStore``: the A2A SDK's ``TaskStore`` kept in Baton, so an A2A server's tasks survive
its restarts and are shared by its replicas.

An A2A task is a Baton task whose id is the A2A task id (after an optional
prefix); each caller's copy (tenant and owner, as the SDK scopes them) is one
checkpoint of that task, replaced at every save by a patch with If-Match, so
every save is a hashed, audited revision. The layout is the TypeScript
store's (docs/a2a.md): a task either SDK saved is read by the other. Page
tokens are the Python SDK's own (base64 of the next page's first task id).
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks.task_store import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import decode_page_token, encode_page_token

from baton import AsyncClient, BatonError, Client
from baton._steps import Do, Steps, run

from .record import (
    EXTENSION,
    KIND_DELETED,
    KIND_TASK,
    LABEL_CONTEXT,
    LABEL_ID,
    LABEL_KIND,
    LABEL_SCOPE,
    LABEL_STATE,
    baton_state,
    checkpoint_of,
    patch_of,
    scope_label,
    sha256,
    task_of,
)

logger = logging.getLogger(__name__)

#: Search results read per request while listing.
PAGE = 1000
ATTEMPTS = 20
#: Conflicts another writer can cause: read again and retry.
_AGAIN = ("version_conflict", "idempotency_key_reused", "checkpoint_finalized")


class BatonTaskStore(TaskStore):
    """``BatonTaskStore(client=...)``: ``client`` is a ``baton.AsyncClient`` or a ``baton.Client``."""

    def __init__(
        self,
        client: AsyncClient | Client,
        *,
        agent_id: str = "a2a",
        owner_resolver: OwnerResolver = resolve_user_scope,
        task_prefix: str = "",
    ) -> None:
        self.client = client
        self.agent_id = agent_id
        self.owner_resolver = owner_resolver
        self.task_prefix = task_prefix

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await run(self.client, self._save(task, self._scope(context)))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        doc = await run(self.client, self._newest(self.task_prefix + task_id, self._scope(context)))
        return None if doc is None else task_of(doc)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await run(self.client, self._list(params, self._scope(context)))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await run(self.client, self._delete(self.task_prefix + task_id, self._scope(context)))

    def _scope(self, context: ServerCallContext) -> str:
        return scope_label(context.tenant or "", self.owner_resolver(context))

    # Steps.

    def _newest(self, task_id: str, scope: str) -> Steps[dict[str, Any] | None]:
        """
        A caller's copy of a task. One newer than it that failed Baton's hash
        check is an error, not a task that is not there.
        """
        labels = {LABEL_SCOPE: scope, LABEL_KIND: KIND_TASK}
        page = yield Do(lambda c: c.checkpoints.search(task_id=task_id, labels=labels, limit=1))
        if page.get("corrupted"):
            raise RuntimeError(
                f"The newest checkpoint of Baton task {task_id} failed Baton's hash check "
                f"({', '.join(page['corrupted'])}); restore it or recover the task."
            )
        return page["items"][0] if page["items"] else None

    def _save(self, task: Task, scope: str) -> Steps[None]:
        task_id = self.task_prefix + task.id
        # Serialized now: the caller may change its task object while the request is on its way.
        body = checkpoint_of(task_id, self.agent_id, scope, task)
        key = f"{task_id}\0{scope}"
        for _ in range(ATTEMPTS):
            current = yield from self._newest(task_id, scope)
            if current is not None and current["status"] == "finalized" and current.get("finalStatus") == "handoff":
                raise RuntimeError(
                    f"The Baton task of A2A task {task.id} is being handed off; "
                    "the agent that acknowledges the handoff saves it next."
                )
            try:
                if current is None:
                    first = f"a2a-task:{sha256(key)}:first"
                    written = yield _create(body, first)
                    if written["labels"].get(LABEL_KIND) != KIND_TASK or written["version"] > 1:
                        # The key's first answer is a copy since deleted or changed: take it up again.
                        written = yield _patch(written["id"], patch_of(body), written["version"])
                elif current["status"] == "finalized":
                    after = {**body, "parentId": current["id"]}
                    following = f"a2a-task:after:{current['id']}"
                    written = yield _create(after, following)
                else:
                    written = yield _patch(current["id"], patch_of(body), current["version"])
            except BatonError as error:
                if error.code in _AGAIN:
                    continue
                raise
            state = baton_state(task)
            previous = None if current is None else current["labels"].get(LABEL_STATE)
            if state is not None and body["labels"].get(LABEL_STATE) != previous:
                yield from self._settle(task_id, state)
            del written
            return None
        raise RuntimeError("The A2A task changed under every attempt to save it; try again.")

    def _settle(self, task_id: str, state: str) -> Steps[None]:
        """The Baton task's state follows the A2A task's, unless Baton's own protocol holds it (a handoff, a block)."""
        try:
            yield Do(lambda c: c.tasks.set_state(task_id, {"state": state}))
        except BatonError as error:
            if error.code not in ("handoff_pending", "conflict"):
                raise
        return None

    def _delete(self, task_id: str, scope: str) -> Steps[None]:
        """
        The caller's copy is no longer served: its checkpoint is marked
        deleted and its task removed, in one audited revision (Baton keeps
        the earlier ones; ``client.tasks.purge`` erases a task whole).
        """
        for _ in range(ATTEMPTS):
            current = yield from self._newest(task_id, scope)
            if current is None:
                return None
            tombstone = {"labels": {LABEL_KIND: KIND_DELETED, LABEL_STATE: None}, "extensions": {EXTENSION: None}}
            try:
                if current["status"] == "finalized":
                    return None
                yield _patch(current["id"], tombstone, current["version"])
                return None
            except BatonError as error:
                if error.code in _AGAIN:
                    continue
                raise
        raise RuntimeError("The A2A task changed under every attempt to delete it; try again.")

    def _list(self, params: ListTasksRequest, scope: str) -> Steps[ListTasksResponse]:
        """Newest status first (ties by task id, descending), tasks without a status time last, as the SDK lists."""
        labels: dict[str, Any] = {LABEL_SCOPE: scope, LABEL_KIND: KIND_TASK}
        if params.context_id:
            labels[LABEL_CONTEXT] = params.context_id
        tasks: list[Task] = []
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            query: dict[str, Any] = {"labels": labels, "limit": PAGE, **({"cursor": cursor} if cursor else {})}
            page = yield _search(query)
            for doc in page["items"]:
                a2a_id = str(doc["labels"].get(LABEL_ID))
                # Another store's tasks (another prefix) are not this one's; a task's older checkpoint is passed over.
                if doc["taskId"] != self.task_prefix + a2a_id or doc["taskId"] in seen:
                    continue
                seen.add(doc["taskId"])
                try:
                    tasks.append(task_of(doc))
                except ValueError:
                    logger.exception("Skipping A2A task %s: its checkpoint holds no readable task.", a2a_id)
            cursor = page.get("nextCursor")
            if not cursor:
                break
        if params.status:
            tasks = [t for t in tasks if t.status.state == params.status]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToJsonString()
            tasks = [
                t
                for t in tasks
                if t.HasField("status")
                and t.status.HasField("timestamp")
                and t.status.timestamp.ToJsonString() >= after
            ]

        def order(t: Task) -> tuple[bool, str, str]:
            has = t.HasField("status") and t.status.HasField("timestamp")
            return has, t.status.timestamp.ToJsonString() if has else "", t.id

        tasks.sort(key=order, reverse=True)
        total = len(tasks)
        start = 0
        if params.page_token:
            first = decode_page_token(params.page_token)
            found = next((i for i, t in enumerate(tasks) if t.id == first), None)
            if found is None:
                raise InvalidParamsError(f"Invalid page token: {params.page_token}")
            start = found
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        end = start + size
        return ListTasksResponse(
            next_page_token=encode_page_token(tasks[end].id) if end < total else None,
            tasks=tasks[start:end],
            total_size=total,
            page_size=size,
        )


def _patch(doc_id: str, patch: dict[str, Any], version: int) -> Do:
    return Do(lambda c: c.checkpoints.patch(doc_id, patch, if_match=version))


def _create(body: dict[str, Any], key: str) -> Do:
    return Do(lambda c: c.checkpoints.create(body, idempotency_key=key))


def _search(query: dict[str, Any]) -> Do:
    return Do(lambda c: c.checkpoints.search(**query))
