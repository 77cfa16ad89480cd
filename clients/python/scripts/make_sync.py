"""Writes src/baton/_sync_resources.py from src/baton/_async_resources.py.

The async resources are the source of truth (STYLE.md, the Python
package); the sync ones are the same text without ``async``/``await``,
with ``Async`` names made plain. ``python scripts/make_sync.py --check``
fails when the committed file is not what this makes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src" / "baton"
RULES = [
    (
        r'"""The resources of ``AsyncClient``: the source of truth for ``_sync_resources.py``\.',
        '"""The resources of ``Client``, made from ``_async_resources.py``: do not edit by hand.',
    ),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\baevent_stream\b", "event_stream"),
    (r"\barun\b", "run"),
    (r"\bAsync(\w+)", r"\1"),
    (r"\basync def\b", "def"),
    (r"\bawait ", ""),
]


def make() -> str:
    text = (HERE / "_async_resources.py").read_text()
    for pattern, replacement in RULES:
        text = re.sub(pattern, replacement, text)
    return text


def main() -> int:
    target = HERE / "_sync_resources.py"
    made = make()
    if "--check" in sys.argv:
        if target.read_text() != made:
            print("_sync_resources.py is not made from _async_resources.py; run scripts/make_sync.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
