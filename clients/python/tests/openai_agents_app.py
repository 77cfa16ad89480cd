"""An OpenAI Agents app run in its own process by test_openai_agents_processes.py, offline (ScriptedModel).

python openai_agents_app.py URL TOKEN SESSION ask      # runs until the tool call waits for approval, saves the run
python openai_agents_app.py URL TOKEN SESSION approve  # loads the run from Baton, approves, finishes it
"""

from __future__ import annotations

import asyncio
import json
import sys

from agents import Agent, ModelSettings, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, function_call

from baton import AsyncClient
from baton.openai_agents import BatonSession, load_run_state, save_run_state

executed: list[str] = []


@function_tool(name_override="refund", description_override="Refunds an order.", needs_approval=True)
def refund(order: str) -> str:
    executed.append(order)
    return f"refunded {order}"


def agent(model: ScriptedModel) -> Agent:
    return Agent(
        name="support",
        instructions="Refund when asked.",
        model=model,
        tools=[refund],
        model_settings=ModelSettings(tool_choice="refund"),
        tool_use_behavior="stop_on_first_tool",
    )


async def main() -> None:
    url, token, session_id, mode = sys.argv[1:5]
    set_tracing_disabled(True)
    async with AsyncClient(url, token=token) as client:
        session = BatonSession(client, session_id)
        if mode == "ask":
            model = ScriptedModel()
            model.enqueue([function_call("refund", {"order": "A-17"}, call_id="call_1")])
            result = await Runner.run(agent(model), "Refund order A-17, please.", session=session)
            saved = await save_run_state(client, session_id, result.to_state())
            print(json.dumps({"interruptions": len(result.interruptions), "checkpoint": saved["id"]}), flush=True)
        else:
            root = agent(ScriptedModel())
            state = await load_run_state(client, root, session_id)
            assert state is not None
            pending = state.get_interruptions()
            state.approve(pending[0])
            result = await Runner.run(root, state, session=session)
            await save_run_state(client, session_id, result.to_state())
            items = await session.get_items()
            print(
                json.dumps(
                    {"pending": len(pending), "output": result.final_output, "executed": executed, "items": len(items)}
                ),
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
