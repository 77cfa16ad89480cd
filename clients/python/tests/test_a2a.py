"""BatonTaskStore beyond the SDK's tests: replicas, and tasks crossing between the Python and TypeScript stores."""

from __future__ import annotations

import json
import subprocess
import uuid
from datetime import datetime, timezone

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Struct

from baton import AsyncClient, Client
from baton.a2a import BatonTaskStore
from baton_server import ROOT, TOKENS


class Alice(User):
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return "alice"


# A named user: each SDK names an anonymous caller its own way ("" in Python, "unknown" in JavaScript).
CONTEXT = ServerCallContext(user=Alice(), tenant="acme")


def detailed(task_id: str) -> Task:
    metadata = Struct()
    metadata.update({"note": None, "nested": {"list": [1, "two", None, {"deep": True}]}})
    return Task(
        id=task_id,
        context_id="ctx-1",
        status=TaskStatus(
            state=TaskState.TASK_STATE_INPUT_REQUIRED,
            timestamp=datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc),
            message=Message(message_id="m1", role=Role.ROLE_AGENT, parts=[Part(text="Which size?")]),
        ),
        history=[Message(message_id="m0", role=Role.ROLE_USER, parts=[Part(text="Order a shirt")])],
        artifacts=[Artifact(artifact_id="a1", name="quote", parts=[Part(text="12 EUR")])],
        metadata=metadata,
    )


async def test_a_task_saved_by_one_replica_is_served_by_another(baton_url: str, client: Client) -> None:
    task_id = f"order-{uuid.uuid4()}"
    async with AsyncClient(baton_url, token=TOKENS["writer"]) as a, AsyncClient(baton_url, token=TOKENS["writer"]) as b:
        one, two = BatonTaskStore(a), BatonTaskStore(b)
        await one.save(detailed(task_id), CONTEXT)
        assert await two.get(task_id, CONTEXT) == detailed(task_id)
        done = detailed(task_id)
        done.status.state = TaskState.TASK_STATE_COMPLETED
        await two.save(done, CONTEXT)
        assert (await one.get(task_id, CONTEXT)).status.state == TaskState.TASK_STATE_COMPLETED  # type: ignore[union-attr]
    # One checkpoint per task and caller, a revision per save; Baton's task state follows the A2A one.
    docs = client.checkpoints.search(task_id=task_id, labels={"a2a.kind": "task"})["items"]
    assert len(docs) == 1 and docs[0]["version"] == 2
    assert client.tasks.get(task_id)["state"] == "completed"
    assert client.tasks.verify_audit(task_id)["ok"] is True


async def test_tasks_cross_between_the_python_and_typescript_stores(aclient: AsyncClient) -> None:
    store = BatonTaskStore(aclient)
    from_python, from_typescript = f"py-{uuid.uuid4()}", f"ts-{uuid.uuid4()}"
    await store.save(detailed(from_python), CONTEXT)
    script = f"""
import {{ Task, TaskState }} from '@a2a-js/sdk';
import {{ ServerCallContext }} from '@a2a-js/sdk/server';
import {{ BatonClient }} from 'baton/client';
import {{ BatonTaskStore }} from 'baton/a2a';
const client = new BatonClient({{ baseUrl: {json.dumps(aclient.base_url)}, token: {json.dumps(TOKENS["writer"])} }});
const store = new BatonTaskStore({{ client }});
const context = new ServerCallContext({{ tenant: "acme", user: {{ isAuthenticated: true, userName: "alice" }} }});
const loaded = await store.load({json.dumps(from_python)}, context);
const copy = {{ ...loaded, id: {json.dumps(from_typescript)}, status: {{ ...loaded.status, state: TaskState.TASK_STATE_WORKING }} }};
await store.save(copy, context);
console.log(JSON.stringify(Task.toJSON(loaded)));
"""
    done = subprocess.run(
        ["npx", "tsx", "--input-type=module", "-"], input=script, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # What TypeScript read is the task Python saved, field for field.
    seen_by_typescript = Task()
    ParseDict(json.loads(done.stdout.strip().splitlines()[-1]), seen_by_typescript)
    assert seen_by_typescript == detailed(from_python)
    # And what TypeScript saved, Python reads.
    expected = detailed(from_typescript)
    expected.status.state = TaskState.TASK_STATE_WORKING
    assert await store.get(from_typescript, CONTEXT) == expected
