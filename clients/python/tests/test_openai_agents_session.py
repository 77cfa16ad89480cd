"""BatonSession beyond the SDK's own tests: the wrapper form, writers in parallel, segments, TypeScript reading it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid

from agents.memory.session import _session_accepts_wrapper

from baton import AsyncClient, Client
from baton.openai_agents import BatonSession
from baton_server import ROOT, TOKENS


def test_every_method_takes_the_wrapper_context_form(client: Client) -> None:
    assert _session_accepts_wrapper(BatonSession(client, "s"))


async def test_two_writers_in_parallel_lose_no_item(baton_url: str) -> None:
    session_id = f"par-{uuid.uuid4()}"
    async with AsyncClient(baton_url, token=TOKENS["writer"]) as a, AsyncClient(baton_url, token=TOKENS["writer"]) as b:
        one, two = BatonSession(a, session_id), BatonSession(b, session_id)

        async def write(session: BatonSession, who: str) -> None:
            for i in range(10):
                await session.add_items([{"role": "user", "content": f"{who}{i}"}])

        await asyncio.gather(write(one, "a"), write(two, "b"))
        items = await one.get_items()
    contents = [item["content"] for item in items]
    assert sorted(contents) == sorted([f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)])
    # Each writer's own items stay in the order it wrote them.
    assert [c for c in contents if c.startswith("a")] == [f"a{i}" for i in range(10)]


async def test_a_history_across_sealed_segments_reads_pops_and_clears(aclient: AsyncClient) -> None:
    session = BatonSession(aclient, f"seg-{uuid.uuid4()}", segment_bytes=300)
    for i in range(30):
        await session.add_items([{"role": "user", "content": f"m{i}"}])
    segments = (await aclient.checkpoints.history(session.task_id, limit=100))["items"]
    assert len(segments) > 3
    assert [i["content"] for i in await session.get_items(limit=7)] == [f"m{i}" for i in range(23, 30)]
    for expected in range(29, 19, -1):
        assert (await session.pop_item())["content"] == f"m{expected}"
    assert [i["content"] for i in await session.get_items()] == [f"m{i}" for i in range(20)]
    again = BatonSession(aclient, session.session_id)
    assert len(await again.get_items()) == 20
    await again.clear_session()
    assert await session.get_items() == [] and await session.pop_item() is None


async def test_the_typescript_session_reads_a_python_session_and_the_other_way(aclient: AsyncClient) -> None:
    session = BatonSession(aclient, f"xl-{uuid.uuid4()}", segment_bytes=200)
    await session.add_items([{"role": "user", "content": f"py{i}"} for i in range(8)])
    script = f"""
import {{ BatonClient }} from 'baton/client';
import {{ BatonSession }} from 'baton/openai-agents';
const client = new BatonClient({{ baseUrl: {json.dumps(aclient.base_url)}, token: {json.dumps(TOKENS["writer"])} }});
const session = new BatonSession({{ client, sessionId: {json.dumps(session.session_id)}, segmentBytes: 200 }});
const items = await session.getItems();
await session.addItems([{{ role: 'user', content: 'ts0' }}]);
console.log(JSON.stringify(items.map((i) => i.content)));
"""
    done = subprocess.run(
        ["npx", "tsx", "--input-type=module", "-"], input=script, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [f"py{i}" for i in range(8)]
    assert [i["content"] for i in await session.get_items()] == [*(f"py{i}" for i in range(8)), "ts0"]
