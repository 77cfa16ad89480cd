"""LangGraph with BatonSaver across processes: a human's answer, a killed process, the audit chain."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from baton import Client
from baton_server import TOKENS

APP = str(Path(__file__).with_name("langgraph_app.py"))


def run(url: str, *args: str, printed: list[str] | None = None) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, APP, url, TOKENS["writer"], *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    if printed is not None:
        printed.extend(lines[:-1])
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def test_a_graph_interrupted_for_a_human_is_resumed_by_another_process(baton_url: str, client: Client) -> None:
    thread = f"ask-{uuid.uuid4()}"
    asked = run(baton_url, thread, "ask")
    assert asked == {"interrupts": [{"question": "Ship the release?"}]}
    # A second process, which shares nothing with the first but the Baton server, gives the answer.
    finished = run(baton_url, thread, "answer", "yes")
    assert finished["done"] == "Ship the release? -> yes"
    check = client.tasks.verify_audit(f"langgraph:{thread}")
    assert check["ok"] is True and check["entries"] >= 4


def test_a_process_killed_mid_run_resumes_from_its_last_checkpoint(baton_url: str, client: Client) -> None:
    thread = f"count-{uuid.uuid4()}"
    target = 12
    process = subprocess.Popen(
        [sys.executable, APP, baton_url, TOKENS["writer"], thread, "count", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() == "step 5":
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    history = client.checkpoints.history(f"langgraph:{thread}", limit=100)["items"]
    assert 0 < len(history) < target + 2
    printed: list[str] = []
    resumed = run(baton_url, thread, "resume", printed=printed)
    # The new process starts at the step the killed one was in (5, or 6 if its checkpoint landed), not at 0.
    assert printed[0] in ("step 5", "step 6"), printed
    # Every step ran to completion exactly once in the final state: none lost, none repeated.
    assert resumed["n"] == target and resumed["log"] == list(range(target))
    assert client.tasks.verify_audit(f"langgraph:{thread}")["ok"] is True
