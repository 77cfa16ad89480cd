"""The client against a real Baton server: every resource, lease fencing, the event stream, problems."""

from __future__ import annotations

import threading
import uuid

import pytest

from baton import AsyncClient, BatonError, Client
from baton_server import TOKENS


def test_create_read_patch_finalize_and_history(client: Client, task_id: str) -> None:
    first = client.checkpoints.create(
        {"taskId": task_id, "agentId": "agent-a", "executionState": {"phase": "implementing"}, "labels": {"k": "v"}}
    )
    assert first["version"] == 1
    patched = client.checkpoints.patch(first["id"], {"executionState": {"phase": "testing"}}, if_match=1)
    assert patched["version"] == 2 and patched["executionState"]["phase"] == "testing"
    assert client.checkpoints.get(first["id"], version=1)["executionState"]["phase"] == "implementing"
    with pytest.raises(BatonError) as stale:
        client.checkpoints.patch(first["id"], {"labels": {"k": "w"}}, if_match=1)
    assert stale.value.status == 412 and stale.value.code == "version_conflict"
    child = client.checkpoints.create({"taskId": task_id, "agentId": "agent-a", "parentId": first["id"]})
    assert client.checkpoints.latest(task_id) == {"checkpoint": child, "skipped": []}
    assert [c["id"] for c in client.checkpoints.history(task_id)["items"]] == [child["id"], first["id"]]
    assert [c["id"] for c in client.checkpoints.search(task_id=task_id, labels={"k": "v"})["items"]] == [first["id"]]
    lineage = client.checkpoints.lineage(child["id"])
    assert [node["id"] for node in lineage["ancestors"]] == [first["id"]]
    assert len(client.checkpoints.revisions(first["id"])["items"]) == 2
    final = client.checkpoints.finalize(child["id"], {"status": "completed"})
    assert final["status"] == "finalized"
    with pytest.raises(BatonError) as finalized:
        client.checkpoints.patch(child["id"], {"labels": {"x": 1}}, if_match=final["version"])
    assert finalized.value.code == "checkpoint_finalized"
    assert client.tasks.verify_audit(task_id)["ok"] is True
    assert client.tasks.get(task_id)["checkpoints"] == 2
    prompt = client.checkpoints.resume_prompt(first["id"], max_tokens=500)
    assert prompt["checkpointId"] == first["id"] and prompt["text"]


def test_bad_input_surfaces_the_problem_document(client: Client) -> None:
    with pytest.raises(BatonError) as raised:
        client.checkpoints.create({"taskId": "", "agentId": "a", "bogus": 1})  # type: ignore[typeddict-unknown-key]
    error = raised.value
    assert error.status == 400 and error.code == "validation_failed"
    assert {e["field"] for e in error.errors} >= {"taskId"}
    with pytest.raises(BatonError) as missing:
        client.checkpoints.get("00000000-0000-4000-8000-000000000000")
    assert missing.value.status == 404 and missing.value.code == "not_found"


def test_an_idempotency_key_sent_twice_applies_once(client: Client, task_id: str) -> None:
    key = str(uuid.uuid4())
    body = {"taskId": task_id, "agentId": "agent-a"}
    first = client.checkpoints.create(body, idempotency_key=key)  # type: ignore[arg-type]
    again = client.checkpoints.create(body, idempotency_key=key)  # type: ignore[arg-type]
    assert first["id"] == again["id"] and len(client.checkpoints.history(task_id)["items"]) == 1


def test_lease_epochs_fence_the_writes_of_a_superseded_agent(baton_url: str, task_id: str) -> None:
    with Client(baton_url, token=TOKENS["writer"]) as a, Client(baton_url, token=TOKENS["writer"]) as b:
        lease = a.leases.acquire(task_id, agent_id="agent-a", ttl_ms=60_000)
        assert a.lease_epoch(task_id) == lease["epoch"]
        doc = a.checkpoints.create({"taskId": task_id, "agentId": "agent-a"})
        # Agent b has never seen the checkpoint and holds no lease: its write goes without an epoch and is refused.
        with pytest.raises(BatonError) as unfenced:
            b.checkpoints.patch(doc["id"], {"labels": {"by": "b"}}, if_match=1)
        assert unfenced.value.status == 428
        handed = a.handoffs.start(doc["id"], {"trigger": "explicit", "note": "over to b"})
        taken = b.handoffs.ack(handed["handoff"]["id"], {"agentId": "agent-b"})
        assert b.lease_epoch(task_id) == taken["lease"]["epoch"] > lease["epoch"]
        with pytest.raises(BatonError) as superseded:
            a.checkpoints.create({"taskId": task_id, "agentId": "agent-a"})
        assert superseded.value.code == "lease_superseded"
        child = taken["checkpoint"]
        assert b.checkpoints.patch(child["id"], {"labels": {"by": "b"}}, if_match=child["version"])["version"] == 2
        released = b.leases.release(taken["lease"]["leaseId"])
        assert released["status"] == "released" and b.lease_epoch(task_id) is None


def test_recovery_gives_the_recovering_agent_the_lease(client: Client, task_id: str) -> None:
    doc = client.checkpoints.create({"taskId": task_id, "agentId": "agent-a"})
    assert client.recoveries.point(task_id)["checkpoint"]["id"] == doc["id"]
    started = client.recoveries.start(task_id, {"reason": "crashed", "failure": {"kind": "crash"}})
    assert started["recovery"]["status"] == "initiated"
    completed = client.recoveries.complete(started["recovery"]["id"], {"agentId": "agent-r"})
    assert client.lease_epoch(task_id) == completed["lease"]["epoch"]
    assert client.recoveries.get(started["recovery"]["id"])["status"] == "completed"


def test_task_state_stale_check_and_purge(admin: Client, client: Client, task_id: str) -> None:
    doc = client.checkpoints.create({"taskId": task_id, "agentId": "agent-a"})
    assert client.tasks.set_state(task_id, {"state": "input-required"})["paused"] is True
    report = client.checkpoints.stale_check(doc["id"], [{"path": "src/a.py", "sha256": "0" * 64}])
    assert "files" in report
    assert len(client.tasks.audit(task_id)["items"]) >= 1
    admin.tasks.purge(task_id)
    with pytest.raises(BatonError) as gone:
        client.checkpoints.get(doc["id"])
    assert gone.value.status in (404, 410)
    assert admin.tasks.verify_audit(task_id)["ok"] is True


def test_events_page_and_stream_resume_from_the_last_event(client: Client, task_id: str) -> None:
    start = client.events.page(limit=1000)
    cursor = start.get("nextCursor") or (start["items"][-1]["cursor"] if start["items"] else None)
    while start.get("nextCursor"):
        start = client.events.page(after=start["nextCursor"], limit=1000)
        cursor = start.get("nextCursor") or (start["items"][-1]["cursor"] if start["items"] else cursor)
    docs = [client.checkpoints.create({"taskId": task_id, "agentId": "agent-a"}) for _ in range(3)]
    seen = []
    for event in client.events.stream(types=["CHECKPOINT_CREATED"], after=cursor):
        if event["subject"] in {d["id"] for d in docs} or event["data"].get("taskId") == task_id:
            seen.append(event)
        if len(seen) == 2:
            break
    # A new iterator after the second event's cursor resumes exactly after it (Last-Event-ID).
    resumed = next(iter(client.events.stream(types=["CHECKPOINT_CREATED"], after=seen[-1]["cursor"])))
    assert resumed["cursor"] > seen[-1]["cursor"] or resumed["id"] != seen[-1]["id"]
    assert resumed["data"].get("checkpointId", resumed.get("subject")) is not None


async def test_the_async_client_has_the_same_methods(aclient: AsyncClient, task_id: str) -> None:
    doc = await aclient.checkpoints.create({"taskId": task_id, "agentId": "agent-a"})
    assert (await aclient.checkpoints.latest(task_id))["checkpoint"]["id"] == doc["id"]
    assert (await aclient.tasks.verify_audit(task_id))["ok"] is True
    live = aclient.events.stream(types=["CHECKPOINT_CREATED"])
    timer = threading.Timer(
        0.5,
        lambda: Client(aclient.base_url, token=TOKENS["writer"]).checkpoints.create(
            {"taskId": task_id, "agentId": "later"}
        ),
    )
    timer.start()
    async for event in live:
        if event["data"].get("agentId") == "later" or event.get("subject"):
            break
    timer.join()
