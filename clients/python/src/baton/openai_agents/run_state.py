"""``save_run_state`` / ``load_run_state``: a run's ``RunState`` kept as a checkpoint of a Baton task.

A run paused for tool approvals, or one to carry on after a crash, is saved
as a new checkpoint linked to the one before (``oa.kind=run-state``, the
SDK's ``RunState.to_json()`` under ``extensions.openaiAgents.state``), as
the TypeScript ``saveRunState`` does, so another process, or another agent
after a handoff of the task, resumes it from Baton alone. Its pending
approvals become the checkpoint's blocked items and continuation prompt, so
a person reading the task sees what it waits for.
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, RunState

from baton import AsyncClient, Client
from baton._steps import Do, Steps, run

from .record import EXTENSION, KIND_RUN_STATE, LABEL_AGENT, LABEL_INTERRUPTIONS, LABEL_KIND, run_state_of


def _newest(task_id: str) -> Steps[dict[str, Any] | None]:
    page = yield Do(lambda c: c.checkpoints.search(task_id=task_id, labels={LABEL_KIND: KIND_RUN_STATE}, limit=1))
    return next((doc for doc in page["items"] if run_state_of(doc) is not None), None)


def _save(task_id: str, state: RunState[Any, Any], agent_id: str, include_tracing_api_key: bool) -> Steps[Any]:
    previous = yield from _newest(task_id)
    data = state.to_json(include_tracing_api_key=include_tracing_api_key)
    current = getattr(state, "_current_agent", None)
    agent = getattr(current, "name", None) or "agent"
    approvals = []
    for item in state.get_interruptions():
        raw = item.raw_item
        call_id = getattr(raw, "call_id", None) or (raw.get("call_id") if isinstance(raw, dict) else None)
        arguments = getattr(item, "arguments", None)
        entry = {
            "description": f"Approve {item.name or 'tool call'}" + (f" with {arguments}" if arguments else ""),
            "blocker": "waiting for a tool approval",
        }
        if call_id:
            entry["id"] = call_id
        approvals.append(entry)
    finished = (data.get("current_step") or {}).get("type") == "next_step_final_output"
    waiting = (
        f" It waits for {len(approvals)} tool approval(s): approve or reject each of state.get_interruptions() "
        "before running it again."
        if approvals
        else ""
    )
    body: dict[str, Any] = {
        "taskId": task_id,
        "agentId": agent_id,
        "executionState": {
            "phase": "complete" if finished else "implementing",
            "blockedItems": approvals,
            "currentFocus": f"{agent} waits for {len(approvals)} tool approval(s)" if approvals else f"{agent} runs",
        },
        "recovery": {
            "continuationPrompt": (
                f"An OpenAI Agents run with {agent}. Resume it with load_run_state(client, root_agent, "
                f"{json.dumps(task_id)}) and Runner.run(root_agent, state, session=session).{waiting}"
            ),
        },
        "labels": {LABEL_KIND: KIND_RUN_STATE, LABEL_AGENT: agent[:1000], LABEL_INTERRUPTIONS: len(approvals)},
        "extensions": {EXTENSION: {"kind": KIND_RUN_STATE, "state": data}},
    }
    if previous is not None:
        body["parentId"] = previous["id"]
        body["recovery"]["lastSuccessfulState"] = previous["id"]
    created = yield Do(lambda c: c.checkpoints.create(body))
    return created


async def save_run_state(
    client: AsyncClient | Client,
    task_id: str,
    state: RunState[Any, Any],
    *,
    agent_id: str = "openai-agents",
    include_tracing_api_key: bool = False,
) -> dict[str, Any]:
    """Saves ``state`` as the newest run-state checkpoint of ``task_id`` (for a run with a session, its id)."""
    created: dict[str, Any] = await run(client, _save(task_id, state, agent_id, include_tracing_api_key))
    return created


async def load_run_state(
    client: AsyncClient | Client, agent: Agent[Any], task_id: str, **from_json: Any
) -> RunState[Any, Agent[Any]] | None:
    """
    The newest run state saved to ``task_id``, deserialized against
    ``agent`` (the root of the agent graph the run started with), or None.
    Baton verifies the checkpoint's hash before answering. Keywords go to
    ``RunState.from_json`` (``context_override``, ``context_deserializer``).
    """
    doc = await run(client, _newest(task_id))
    if doc is None:
        return None
    record = run_state_of(doc)
    assert record is not None
    return await RunState.from_json(agent, record["state"], **from_json)
