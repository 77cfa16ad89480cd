"""BatonSessionService beyond ADK's tests: replicas share sessions, and a stale session object is refused."""

from __future__ import annotations

import uuid

import pytest
from google.adk.events import Event, EventActions
from google.genai import types

from baton import AsyncClient, Client
from baton.adk import BatonSessionService
from baton_server import TOKENS


async def test_a_session_written_by_one_replica_is_served_by_another(baton_url: str, client: Client) -> None:
    app = f"shop-{uuid.uuid4().hex[:8]}"
    async with AsyncClient(baton_url, token=TOKENS["writer"]) as a, AsyncClient(baton_url, token=TOKENS["writer"]) as b:
        one, two = BatonSessionService(a), BatonSessionService(b)
        session = await one.create_session(app_name=app, user_id="u1", state={"cart": [], "user:tier": "gold"})
        event = Event(
            invocation_id="i1",
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="add socks")]),
            actions=EventActions(state_delta={"cart": ["socks"], "app:promo": "winter", "temp:scratch": 1}),
        )
        await one.append_event(session, event)
        served = await two.get_session(app_name=app, user_id="u1", session_id=session.id)
        assert served is not None and served == session
        assert served.state == {"cart": ["socks"], "user:tier": "gold", "app:promo": "winter"}
        # A second session of another user sees the app's state, not the first user's.
        other = await two.create_session(app_name=app, user_id="u2")
        assert other.state == {"app:promo": "winter"}
        # The first replica's session object is now older than what Baton holds once the second appends.
        await two.append_event(served, Event(invocation_id="i2", author="agent"))
        with pytest.raises(ValueError, match="earlier than the update_time"):
            await one.append_event(session, Event(invocation_id="i3", author="agent"))
        listed = await two.list_sessions(app_name=app, user_id="u1")
        assert [s.id for s in listed.sessions] == [session.id]
    task = f"adk:{app}:u1:{session.id}"
    assert client.tasks.verify_audit(task)["ok"] is True
    assert client.checkpoints.history(task)["items"][0]["version"] == 3
