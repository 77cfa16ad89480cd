"""An OpenAI Agents run paused for approval in one process, approved and finished in another."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from baton import Client
from baton_server import TOKENS

APP = str(Path(__file__).with_name("openai_agents_app.py"))


def run(url: str, *args: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, APP, url, TOKENS["writer"], *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_run_paused_for_approval_is_approved_and_finished_by_another_process(baton_url: str, client: Client) -> None:
    session_id = f"support-{uuid.uuid4()}"
    asked = run(baton_url, session_id, "ask")
    assert asked["interruptions"] == 1
    paused = client.checkpoints.get(asked["checkpoint"])
    # A person reading the task sees what it waits for.
    assert paused["labels"]["oa.interruptions"] == 1
    assert paused["executionState"]["blockedItems"][0]["description"].startswith("Approve refund")
    finished = run(baton_url, session_id, "approve")
    assert finished["pending"] == 1
    assert finished["output"] == "refunded A-17" and finished["executed"] == ["A-17"]
    assert finished["items"] >= 3  # the user's message, the tool call and its output
    latest = client.checkpoints.search(task_id=session_id, labels={"oa.kind": "run-state"}, limit=1)["items"][0]
    assert latest["labels"]["oa.interruptions"] == 0 and latest["parentId"] == paused["id"]
    assert client.tasks.verify_audit(session_id)["ok"] is True
