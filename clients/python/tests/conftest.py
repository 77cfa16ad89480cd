"""Fixtures shared by every test: one real Baton server per session, and clients of it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

import baton_server as baton_server_module
from baton import AsyncClient, Client
from baton_server import TOKENS, BatonServer, start


@pytest.fixture(scope="session", autouse=True)
def baton_server() -> Iterator[BatonServer]:
    """One server for the whole session; ported tests reach it through ``baton_server.current()``."""
    server = start()
    baton_server_module.SESSION = server
    yield server
    baton_server_module.SESSION = None
    server.stop()


@pytest.fixture(scope="session")
def baton_url(baton_server: BatonServer) -> str:
    return baton_server.url


@pytest.fixture
def client(baton_url: str) -> Iterator[Client]:
    with Client(baton_url, token=TOKENS["writer"]) as c:
        yield c


@pytest.fixture
async def aclient(baton_url: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(baton_url, token=TOKENS["writer"]) as c:
        yield c


@pytest.fixture
def admin(baton_url: str) -> Iterator[Client]:
    with Client(baton_url, token=TOKENS["admin"]) as c:
        yield c


@pytest.fixture
def task_id() -> str:
    """A task no other test writes: each test scopes its data to its own task ids."""
    return f"py-{uuid.uuid4()}"
