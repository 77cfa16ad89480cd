"""LangGraph (Python) checkpointer benchmark: BatonSaver beside the savers Python users run today.

One StateGraph of three nodes (plan, act, review) with about 3 KB of
evolving state runs N super-steps per thread, by 1 thread and by 16
concurrent threads, with each saver in the same run on the same machine:

- BatonSaver over HTTP to a Baton server (``node dist/main.js``, LMDB in a
  temporary directory), started here;
- PostgresSaver on Debian's PostgreSQL (``initdb`` in a temporary directory,
  loopback, ``synchronous_commit=on``, fsync on), started here;
- RedisSaver on Debian's ``redis-server`` (``appendonly yes``,
  ``appendfsync always``), started here;
- SqliteSaver on a file (WAL, ``synchronous=FULL``).

Printed per saver and thread count: steps/s, put p50/p99, get_tuple
p50/p99 (a checkpoint by id), list(100) p50, bytes on disk per checkpoint;
"skipped" with the reason for a saver whose server or package is missing.
Then ``RESULT {json}``. Environment: BENCH_STEPS (super-steps per thread,
default 120, so that list(100) reads a full page), BENCH_READS (get_tuple calls, default 200), BENCH_LISTS
(list(100) calls, default 20). Run by ``npm run bench:python``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

ROOT = Path(__file__).resolve().parents[2]
STEPS = int(os.environ.get("BENCH_STEPS", "120"))
READS = int(os.environ.get("BENCH_READS", "200"))
LISTS = int(os.environ.get("BENCH_LISTS", "20"))
TOKEN = "python-bench-token-0123456789abcdef"
PG_BIN = Path("/usr/lib/postgresql/15/bin")


class State(TypedDict, total=False):
    target: int
    n: int
    notes: str
    plan: str
    log: list[str]


def graph(saver: Any) -> Any:
    """Three nodes in a loop; ~3 KB of state that changes at every step."""

    def plan(state: State) -> State:
        n = state.get("n", 0)
        return {"plan": f"step {n}: " + "p" * 200}

    def act(state: State) -> State:
        n = state.get("n", 0)
        words = " ".join(f"w{(n * 7 + i) % 997}" for i in range(400))
        return {"notes": words[:2400], "log": [*state.get("log", [])[-9:], f"acted {n}"]}

    def review(state: State) -> State:
        return {"n": state.get("n", 0) + 1}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("act", act)
    builder.add_node("review", review)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "act")
    builder.add_edge("act", "review")
    builder.add_conditional_edges("review", lambda s: "plan" if s["n"] * 3 < s["target"] else END)
    return builder.compile(checkpointer=saver)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk (``du``), so a sparse or preallocated file counts what it holds."""
    done = subprocess.run(["du", "-sb", "--apparent-size", str(path)], capture_output=True, text=True)
    return int(done.stdout.split()[0]) if done.returncode == 0 else 0


def ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 2)


class Timed:
    """Wraps a saver's put and get_tuple to record their latencies while a graph drives it."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.puts: list[float] = []
        original = saver.put

        def put(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.puts.append(time.perf_counter() - started)

        saver.put = put


# The servers.


@contextmanager
def baton() -> Iterator[tuple[Any, Path]]:
    from baton import Client
    from baton.langgraph import BatonSaver

    if not (ROOT / "dist" / "main.js").exists():
        subprocess.run(["node", "scripts/build.mjs"], cwd=ROOT, check=True, capture_output=True)
    data = Path(tempfile.mkdtemp(prefix="baton-pybench-"))
    env = {
        **os.environ,
        "PORT": "0",
        "HOST": "127.0.0.1",
        "BATON_DATA_DIR": str(data / "data"),
        "BATON_QUEUE_DIR": str(data / "queue"),
        "BATON_TOKENS": f"writer:{TOKEN}",
        "LOG_LEVEL": "info",
    }
    # Run as `npm start` runs it: the node flags of its `start` script.
    start = json.loads((ROOT / "package.json").read_text())["scripts"]["start"].split()
    process = subprocess.Popen(
        ["node", *[word for word in start if word.startswith("--")], "dist/main.js"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    for line in process.stdout:
        match = re.search(r"Server listening at (http://127\.0\.0\.1:\d+)", line)
        if match:
            url = match.group(1)
            break
        if time.monotonic() > deadline:
            break
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()  # type: ignore[union-attr]
    try:
        if url is None:
            raise RuntimeError("the Baton server did not start")
        with Client(url, token=TOKEN) as client:
            yield BatonSaver(client), data / "data"
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def postgres() -> Iterator[tuple[Any, Path]]:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    if not (PG_BIN / "initdb").exists():
        raise FileNotFoundError("Debian's PostgreSQL 15 (apt-get install postgresql) is not installed")
    base = Path(tempfile.mkdtemp(prefix="pg-pybench-"))
    data = base / "data"
    port = free_port()
    # initdb and postgres refuse to run as root: they run as Debian's postgres user.
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    shutil.chown(base, "postgres") if os.geteuid() == 0 else None
    subprocess.run(
        [*as_pg, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "bench"], check=True, capture_output=True
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c synchronous_commit=on -c fsync=on -c max_connections=50"
    )
    subprocess.run(
        [*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-w", "start", "-l", str(base / "log")],
        check=True,
        capture_output=True,
    )
    pool = ConnectionPool(
        f"postgresql://bench@127.0.0.1:{port}/postgres",
        min_size=1,
        max_size=20,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )
    try:
        saver = PostgresSaver(pool)
        saver.setup()
        yield saver, data
    finally:
        pool.close()
        subprocess.run([*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def redis() -> Iterator[tuple[Any, Path]]:
    from langgraph.checkpoint.redis import RedisSaver

    server = shutil.which("redis-server")
    if server is None:
        raise FileNotFoundError("Debian's redis-server (apt-get install redis-server) is not installed")
    base = Path(tempfile.mkdtemp(prefix="redis-pybench-"))
    port = free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(base),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        with RedisSaver.from_conn_string(f"redis://127.0.0.1:{port}") as saver:
            saver.setup()
            yield saver, base
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def sqlite() -> Iterator[tuple[Any, Path]]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    base = Path(tempfile.mkdtemp(prefix="sqlite-pybench-"))
    conn = sqlite3.connect(base / "bench.db", check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver, base
    finally:
        conn.close()
        shutil.rmtree(base, ignore_errors=True)


SAVERS: dict[str, Callable[[], Any]] = {
    "BatonSaver (HTTP, LMDB)": baton,
    "PostgresSaver": postgres,
    "RedisSaver": redis,
    "SqliteSaver (WAL, FULL)": sqlite,
}


def run(saver: Any, data: Path, threads: int) -> dict[str, Any]:
    timed = Timed(saver)
    app = graph(saver)
    before = disk_bytes(data)
    ids = [f"bench-{threads}-{uuid.uuid4().hex[:8]}-{i}" for i in range(threads)]

    def one(thread_id: str) -> None:
        app.invoke(
            {"target": STEPS, "n": 0, "log": []},
            {"configurable": {"thread_id": thread_id}, "recursion_limit": STEPS + 10},
            durability="sync",
        )

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, ids))
    elapsed = time.perf_counter() - started
    checkpoints = len(timed.puts)
    steps = checkpoints  # every super-step writes one checkpoint
    grew = max(0, disk_bytes(data) - before)

    # Reads, one at a time, of checkpoints just written.
    history = list(saver.list({"configurable": {"thread_id": ids[0]}}, limit=STEPS + 5))
    configs = [t.config for t in history]
    gets: list[float] = []
    for _ in range(READS if threads == 1 else 0):
        config = random.choice(configs)
        started_get = time.perf_counter()
        saver.get_tuple(config)
        gets.append(time.perf_counter() - started_get)
    lists: list[float] = []
    for _ in range(LISTS if threads == 1 else 0):
        started_list = time.perf_counter()
        found = list(saver.list({"configurable": {"thread_id": ids[0]}}, limit=100))
        lists.append(time.perf_counter() - started_list)
        assert len(found) == min(100, len(configs))
    del saver.put
    return {
        "threads": threads,
        "steps/s": round(steps / elapsed, 1),
        "put p50 ms": ms(timed.puts, 0.5),
        "put p99 ms": ms(timed.puts, 0.99),
        "get_tuple p50 ms": ms(gets, 0.5),
        "get_tuple p99 ms": ms(gets, 0.99),
        "list(100) p50 ms": round(statistics.median(lists) * 1000, 2) if lists else None,
        "bytes/checkpoint": round(grew / checkpoints) if checkpoints else None,
    }


def table(rows: list[dict[str, Any]]) -> str:
    columns = [
        "saver",
        "threads",
        "steps/s",
        "put p50 ms",
        "put p99 ms",
        "get_tuple p50 ms",
        "get_tuple p99 ms",
        "list(100) p50 ms",
        "bytes/checkpoint",
    ]
    cells = [[str(row.get(c, "") if row.get(c) is not None else "–") for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def main() -> None:
    rows: list[dict[str, Any]] = []
    print(f"LangGraph (Python) savers: {STEPS} super-steps per thread, ~3 KB state; 1 and 16 threads", flush=True)
    for name, start in SAVERS.items():
        try:
            with start() as (saver, data):
                for threads in (1, 16):
                    row = {"saver": name, **run(saver, data, threads)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        except Exception as error:  # a saver whose server or package is missing is reported, not fatal
            reason = f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
            rows.append({"saver": name, "skipped": reason})
            print(f"{name}: skipped ({reason})", flush=True)
    print()
    print(table([r for r in rows if "skipped" not in r]))
    for r in rows:
        if "skipped" in r:
            print(f"{r['saver']}: skipped ({r['skipped']})")
    print("RESULT " + json.dumps(rows))


if __name__ == "__main__":
    sys.exit(main())
