"""A real Baton server for the tests: ``node dist/main.js`` (``npm start``'s build) on a free port.

Each server gets its own data and queue directories, removed when it stops.
``dist/`` is built once per test session when missing or older than ``src/``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOKENS = {
    "admin": "test-admin-token-0123456789abcdef",
    "writer": "test-writer-token-0123456789abcdef",
    "auditor": "test-auditor-token-0123456789abcdef",
}
#: The test session's server, set by the session fixture in conftest.py.
SESSION: BatonServer | None = None
LISTENING = re.compile(r"Server listening at (http://127\.0\.0\.1:\d+)")


def build() -> None:
    main = ROOT / "dist" / "main.js"
    newest = max(p.stat().st_mtime for p in (ROOT / "src").rglob("*.ts"))
    if main.exists() and main.stat().st_mtime >= newest:
        return
    subprocess.run(["node", "scripts/build.mjs"], cwd=ROOT, check=True, capture_output=True)


@dataclass
class BatonServer:
    """One running server; ``stop`` ends it and removes its directories unless ``keep_data``."""

    url: str
    process: subprocess.Popen[str]
    data_dir: str
    queue_dir: str
    output: list[str] = field(default_factory=list)

    def stop(self, keep_data: bool = False) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not keep_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            shutil.rmtree(self.queue_dir, ignore_errors=True)


def start(
    data_dir: str | None = None, queue_dir: str | None = None, extra_env: dict[str, str] | None = None
) -> BatonServer:
    build()
    data_dir = data_dir or tempfile.mkdtemp(prefix="baton-py-data-")
    queue_dir = queue_dir or tempfile.mkdtemp(prefix="baton-py-queue-")
    env = {
        **os.environ,
        "PORT": "0",
        "HOST": "127.0.0.1",
        "BATON_DATA_DIR": data_dir,
        "BATON_QUEUE_DIR": queue_dir,
        "BATON_TOKENS": ",".join(f"{role}:{token}" for role, token in TOKENS.items()),
        # LangGraph's delete_thread and the sessions' clear purge tasks with a writer's token.
        "BATON_WRITER_PURGE": "1",
        "LOG_LEVEL": "info",
        **(extra_env or {}),
    }
    process = subprocess.Popen(
        ["node", "dist/main.js"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if len(output) < 2000:
                output.append(line)
            match = LISTENING.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not ready.wait(0.1):
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("The Baton server did not start within 60 s:\n" + "".join(output))
    if not found:
        raise RuntimeError("The Baton server exited before listening:\n" + "".join(output))
    return BatonServer(found[0], process, data_dir, queue_dir, output)


def current() -> BatonServer:
    if SESSION is None:
        raise RuntimeError("No Baton server: the session fixture in tests/conftest.py starts it.")
    return SESSION
