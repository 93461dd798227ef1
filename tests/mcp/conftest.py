"""Fixtures: a real MCP server, MCP settings written to a temp mcp.json, and a manager over them
with its own file key store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_server import McpTestServer


@pytest.fixture(scope="module")
def mcp_server():
    with McpTestServer() as server:
        yield server


class Settings:
    """mcp.json in a temp folder, rewritten by `write(servers)`."""

    def __init__(self, folder: Path):
        self.path = folder / "mcp.json"

    def write(self, servers: dict[str, Any] | None = None, raw: str | None = None) -> None:
        self.path.write_text(raw if raw is not None else json.dumps({"servers": servers or {}}), encoding="utf-8")

    def load(self):
        from host.mcp.config import load_mcp_config

        return load_mcp_config(self.path)


@pytest.fixture
def settings(tmp_path):
    return Settings(tmp_path)


@pytest.fixture
def key_store(tmp_path):
    from host.providers.secrets import FileKeyStore

    return FileKeyStore(tmp_path / "secrets" / "keys.json")


@pytest.fixture
async def manager(settings, key_store):
    from host.mcp.manager import McpManager

    m = McpManager(settings.load, key_store=lambda: key_store)
    try:
        yield m
    finally:
        await m.close()
