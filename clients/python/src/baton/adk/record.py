"""How ADK sessions and their shared state sit in Baton checkpoints.

A session is the Baton task ``adk:<app>:<user>:<session>`` with one
checkpoint (``adk.kind=session``) whose ``extensions.adk`` holds the
session's own state as JSON text (a state value may be null, which a JSON
Merge Patch cannot write), its events by zero-padded position, each the
event's JSON text (``Event.model_dump_json``, bytes as base64, read back
exactly), the next position and the last update time. ``app:`` state is the
checkpoint of task ``adk-app:<app>`` (``adk.kind=app-state``), ``user:``
state that of ``adk-user:<app>:<user>`` (``adk.kind=user-state``), each
kept without its prefix, as ADK's database service keeps them; ``temp:``
state is never stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

EXTENSION = "adk"
LABEL_KIND, LABEL_APP, LABEL_USER, LABEL_ID = "adk.kind", "adk.app", "adk.user", "adk.id"
KIND_SESSION, KIND_APP, KIND_USER = "session", "app-state", "user-state"
APP_PREFIX, USER_PREFIX, TEMP_PREFIX = "app:", "user:", "temp:"


def task_id(kind: str, *parts: str) -> str:
    """A Baton task id (at most 200 characters): the parts as they are, or their hash when too long."""
    text = ":".join([kind, *parts])
    if len(text) <= 200:
        return text
    return f"{kind}:sha256:{hashlib.sha256(json.dumps(parts).encode()).hexdigest()}"


def label(value: str) -> str:
    return value[:1000]


def split_state(delta: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A state (or a state delta) as app, user and session parts, prefixes taken off; ``temp:`` keys dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in (delta or {}).items():
        if key.startswith(APP_PREFIX):
            app[key[len(APP_PREFIX) :]] = value
        elif key.startswith(USER_PREFIX):
            user[key[len(USER_PREFIX) :]] = value
        elif not key.startswith(TEMP_PREFIX):
            session[key] = value
    return app, user, session


def text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def record_of(doc: dict[str, Any] | None) -> dict[str, Any]:
    record = ((doc or {}).get("extensions") or {}).get(EXTENSION)
    return record if isinstance(record, dict) else {}


def state_of(doc: dict[str, Any] | None) -> dict[str, Any]:
    stored = record_of(doc).get("state")
    return json.loads(stored) if isinstance(stored, str) else {}


def event_key(position: int) -> str:
    return str(position).zfill(12)
