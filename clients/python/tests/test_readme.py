"""The README's quick start, as written: both clients read what curl wrote, the Python one from a fresh venv."""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import httpx

from baton_server import ROOT, start

README = ROOT / "README.md"
TOKEN = "dev-writer-secret-123456"


def quick_start_lines() -> tuple[str, str]:
    text = README.read_text()
    ts = re.search(r"^npx tsx -e .*$", text, re.M)
    py = re.search(r"^pip install \./clients/python && python3 -c .*$", text, re.M)
    assert ts and py, "the README's quick start lost its client lines"
    return ts.group(0), py.group(0)


def test_the_readme_quick_start_works_as_written(tmp_path: Path) -> None:
    ts_line, py_line = quick_start_lines()
    server = start(extra_env={"BATON_TOKENS": f"writer:{TOKEN}"})
    try:
        # The README's curl line writes task-1's first checkpoint; the clients read it back.
        created = httpx.post(
            server.url + "/v1/checkpoints",
            headers={"authorization": f"Bearer {TOKEN}"},
            json={"taskId": "task-1", "agentId": "agent-a", "executionState": {"phase": "implementing"}},
        ).json()
        # Only the address differs: the test server listens on a free port, not 7070.
        env_bin = tmp_path / "venv" / "bin"
        venv.create(tmp_path / "venv", with_pip=True)
        py = py_line.replace("http://127.0.0.1:7070", server.url)
        py = py.replace("pip install ./clients/python", f"{env_bin}/pip install -q {ROOT}/clients/python")
        py = py.replace("python3 -c", f"{env_bin}/python -c")
        done = subprocess.run(["bash", "-c", py], capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == created["id"]
        ts = ts_line.replace("http://127.0.0.1:7070", server.url)
        done = subprocess.run(["bash", "-c", ts], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == created["id"]
    finally:
        server.stop()
    assert sys.version_info >= (3, 10)
