"""``BatonSessionService``: ADK's ``BaseSessionService`` kept in Baton (layout: ``record.py``).

Every write is a JSON Merge Patch with If-Match, so replicas of an ADK app
share sessions and never lose each other's events or state; an event
appended to a session object older than what Baton holds is refused, as
ADK's database service refuses it.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session

from baton import AsyncClient, BatonError, Client
from baton._steps import Do, Steps, run

from .record import (
    APP_PREFIX,
    EXTENSION,
    KIND_APP,
    KIND_SESSION,
    KIND_USER,
    LABEL_APP,
    LABEL_ID,
    LABEL_KIND,
    LABEL_USER,
    USER_PREFIX,
    event_key,
    label,
    record_of,
    split_state,
    state_of,
    task_id,
    text,
)

ATTEMPTS = 20


class BatonSessionService(BaseSessionService):
    """``BatonSessionService(client=...)``: ``client`` is a ``baton.AsyncClient`` or a ``baton.Client``."""

    def __init__(self, client: AsyncClient | Client, *, agent_id: str = "adk", task_prefix: str = "") -> None:
        self.client = client
        self.agent_id = agent_id
        #: Put before every Baton task id this service makes, to keep several deployments apart.
        self.task_prefix = task_prefix

    def _task(self, kind: str, *parts: str) -> str:
        return self.task_prefix + task_id(kind, *parts)

    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        sid = session_id.strip() if session_id and session_id.strip() else str(uuid.uuid4())
        return await run(self.client, self._create(app_name, user_id, sid, state or {}))

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        return await run(self.client, self._get(app_name, user_id, session_id, config))

    async def list_sessions(self, *, app_name: str, user_id: str) -> ListSessionsResponse:
        return await run(self.client, self._list(app_name, user_id))

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await run(self.client, self._delete(self._task("adk", app_name, user_id, session_id)))

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        await run(self.client, self._append(session, event))
        await super().append_event(session, event)
        session.last_update_time = event.timestamp
        return event

    # Steps.

    def _find(self, task: str, kind: str) -> Steps[dict[str, Any] | None]:
        page = yield Do(lambda c: c.checkpoints.search(task_id=task, labels={LABEL_KIND: kind}, limit=1))
        if page.get("corrupted"):
            raise RuntimeError(
                f"The newest checkpoint of Baton task {task} failed Baton's hash check "
                f"({', '.join(page['corrupted'])}); restore it or recover the task."
            )
        return page["items"][0] if page["items"] else None

    def _shared(self, app_name: str, user_id: str) -> Steps[dict[str, Any]]:
        """The app and user state, with their prefixes, as a session shows them."""
        app = yield from self._find(self._task("adk-app", app_name), KIND_APP)
        user = yield from self._find(self._task("adk-user", app_name, user_id), KIND_USER)
        merged = {APP_PREFIX + k: v for k, v in state_of(app).items()}
        merged.update({USER_PREFIX + k: v for k, v in state_of(user).items()})
        return merged

    def _update_shared(self, task: str, kind: str, labels: dict[str, Any], delta: dict[str, Any]) -> Steps[None]:
        """Merges ``delta`` into a shared state's checkpoint with If-Match, making it when there is none."""
        if not delta:
            return None
        for _ in range(ATTEMPTS):
            doc = yield from self._find(task, kind)
            state = {**state_of(doc), **delta}
            try:
                if doc is None:
                    body = {
                        "taskId": task,
                        "agentId": self.agent_id,
                        "labels": {LABEL_KIND: kind, **labels},
                        "extensions": {EXTENSION: {"state": text(state)}},
                    }
                    yield _create(body, None)
                else:
                    yield _patch(doc["id"], {"extensions": {EXTENSION: {"state": text(state)}}}, doc["version"])
                return None
            except BatonError as error:
                if error.code != "version_conflict":
                    raise
        raise RuntimeError("The shared ADK state changed under every attempt to update it; try again.")

    def _create(self, app_name: str, user_id: str, sid: str, state: dict[str, Any]) -> Steps[Session]:
        task = self._task("adk", app_name, user_id, sid)
        if (yield from self._find(task, KIND_SESSION)) is not None:
            raise ValueError(f"Session {sid} already exists.")
        app_delta, user_delta, own = split_state(state)
        yield from self._update_shared(
            self._task("adk-app", app_name), KIND_APP, {LABEL_APP: label(app_name)}, app_delta
        )
        yield from self._update_shared(
            self._task("adk-user", app_name, user_id),
            KIND_USER,
            {LABEL_APP: label(app_name), LABEL_USER: label(user_id)},
            user_delta,
        )
        now = time.time()
        body = {
            "taskId": task,
            "agentId": self.agent_id,
            "labels": {
                LABEL_KIND: KIND_SESSION,
                LABEL_APP: label(app_name),
                LABEL_USER: label(user_id),
                LABEL_ID: label(sid),
            },
            "extensions": {EXTENSION: {"state": text(own), "events": {}, "next": 0, "lastUpdateTime": now}},
        }
        yield _create(body, None)
        merged = {**own, **(yield from self._shared(app_name, user_id))}
        return Session(app_name=app_name, user_id=user_id, id=sid, state=merged, last_update_time=now)

    def _get(self, app_name: str, user_id: str, sid: str, config: GetSessionConfig | None) -> Steps[Session | None]:
        doc = yield from self._find(self._task("adk", app_name, user_id, sid), KIND_SESSION)
        if doc is None:
            return None
        record = record_of(doc)
        events_text = record.get("events") or {}
        events = [Event.model_validate_json(events_text[key]) for key in sorted(events_text)]
        if config:
            if config.num_recent_events:
                events = events[-config.num_recent_events :]
            if config.after_timestamp:
                events = [e for e in events if e.timestamp >= config.after_timestamp]
        state = {**state_of(doc), **(yield from self._shared(app_name, user_id))}
        return Session(
            app_name=app_name,
            user_id=user_id,
            id=sid,
            state=state,
            events=events,
            last_update_time=float(record.get("lastUpdateTime", 0.0)),
        )

    def _list(self, app_name: str, user_id: str) -> Steps[ListSessionsResponse]:
        labels = {LABEL_KIND: KIND_SESSION, LABEL_APP: label(app_name), LABEL_USER: label(user_id)}
        docs: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query: dict[str, Any] = {"labels": labels, "limit": 1000, **({"cursor": cursor} if cursor else {})}
            page = yield _search(query)
            docs.extend(page["items"])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        # Oldest first, as the sessions were created; events and state are not part of a listing.
        docs.sort(key=lambda d: d["createdAt"])
        sessions = [
            Session(
                app_name=app_name,
                user_id=user_id,
                id=str(doc["labels"][LABEL_ID]),
                state={},
                last_update_time=float(record_of(doc).get("lastUpdateTime", 0.0)),
            )
            for doc in docs
            if doc["taskId"] == self._task("adk", app_name, user_id, str(doc["labels"][LABEL_ID]))
        ]
        return ListSessionsResponse(sessions=sessions)

    def _delete(self, task: str) -> Steps[None]:
        try:
            yield Do(lambda c: c.tasks.purge(task))
        except BatonError as error:
            if error.status != 404:
                raise
        return None

    def _append(self, session: Session, event: Event) -> Steps[None]:
        task = self._task("adk", session.app_name, session.user_id, session.id)
        delta = event.actions.state_delta if event.actions and event.actions.state_delta else {}
        app_delta, user_delta, own = split_state(delta)
        for _ in range(ATTEMPTS):
            doc = yield from self._find(task, KIND_SESSION)
            if doc is None:
                raise ValueError(f"Session {session.id} not found.")
            record = record_of(doc)
            stored_time = float(record.get("lastUpdateTime", 0.0))
            if stored_time > session.last_update_time:
                raise ValueError(
                    "The last_update_time provided in the session object "
                    f"{session.last_update_time} is earlier than the update_time in Baton {stored_time}: "
                    "the session was changed by another writer; get it again before appending."
                )
            position = int(record.get("next", 0))
            patch: dict[str, Any] = {
                "events": {event_key(position): event.model_dump_json(exclude_none=True)},
                "next": position + 1,
                "lastUpdateTime": event.timestamp,
            }
            if own:
                patch["state"] = text({**state_of(doc), **own})
            try:
                yield _patch(doc["id"], {"extensions": {EXTENSION: patch}}, doc["version"])
                break
            except BatonError as error:
                if error.code != "version_conflict":
                    raise
        else:
            raise RuntimeError("The ADK session changed under every attempt to append to it; try again.")
        app_labels = {LABEL_APP: label(session.app_name)}
        yield from self._update_shared(self._task("adk-app", session.app_name), KIND_APP, app_labels, app_delta)
        user_labels = {LABEL_APP: label(session.app_name), LABEL_USER: label(session.user_id)}
        yield from self._update_shared(
            self._task("adk-user", session.app_name, session.user_id), KIND_USER, user_labels, user_delta
        )
        return None


def _create(body: dict[str, Any], key: str | None) -> Do:
    return Do(lambda c: c.checkpoints.create(body, idempotency_key=key))


def _patch(doc_id: str, patch: dict[str, Any], version: int) -> Do:
    return Do(lambda c: c.checkpoints.patch(doc_id, patch, if_match=version))


def _search(query: dict[str, Any]) -> Do:
    return Do(lambda c: c.checkpoints.search(**query))
