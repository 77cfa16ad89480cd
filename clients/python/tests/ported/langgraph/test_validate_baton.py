"""Self-tests: run the conformance suite against AsyncBatonSaver."""

from __future__ import annotations

import pytest
from baton import AsyncClient
from baton.langgraph import AsyncBatonSaver
from baton_server import TOKENS

from langgraph.checkpoint.conformance import checkpointer_test, validate

BATON_URL: str = ""


@checkpointer_test(name="AsyncBatonSaver")
async def memory_checkpointer():
    async with AsyncClient(BATON_URL, token=TOKENS["writer"]) as client:
        yield AsyncBatonSaver(client=client)


@pytest.mark.asyncio
async def test_validate_memory_base(baton_url):
    """AsyncBatonSaver passes all base capability tests."""
    global BATON_URL
    BATON_URL = baton_url
    report = await validate(memory_checkpointer)
    report.print_report()
    assert report.passed_all_base(), f"Base tests failed: {report.to_dict()}"
    assert all(report.results[c].passed for c in ("delete_for_runs", "copy_thread", "prune")), report.to_dict()
