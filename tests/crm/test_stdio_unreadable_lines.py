"""Every request line the three elynav MCP servers receive over stdio gets an answer (issue 28, item 6).

A lone surrogate (``"\\ud800"``: valid JSON, not valid Unicode) in a string argument once made the mcp
SDK drop the line below our code: the request id was never answered. Each server is spawned with the
command its .mcp.json entry declares, fed raw lines, and stopped by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.crm.store import CrmStore
from elynav_nb.templates.service import TemplateService

pytestmark = pytest.mark.anyio

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _servers(tmp_path: Path) -> dict[str, tuple[list[str], dict[str, str], str, dict[str, Any]]]:
    database = tmp_path / "crm.sqlite"
    CrmStore.open(database).close()
    home = tmp_path / "elynav-home"
    TemplateService.open(home)
    return {
        "crm": (
            ["-m", "elynav_nb.crm.server", "--db", str(database)],
            {},
            "search_accounts",
            {"query": "Acme \ud800"},
        ),
        "templates": (
            ["-m", "elynav_nb.cli", "mcp", "templates", "--agent", "sdr"],
            {"ELYNAV_HOME": str(home)},
            "idea_template_read",
            {"templateId": "x\udfff"},
        ),
        "docs": (
            ["-m", "elynav_nb", "mcp", "docs"],
            {"DOCS_MCP_LOG_LEVEL": "WARNING"},
            "read_document",
            {"doc_url": "https://docs.example/\ud83d/x"},
        ),
    }


async def _answers(process: asyncio.subprocess.Process, wanted: set[int]) -> dict[int, dict[str, Any]]:
    assert process.stdout is not None
    found: dict[int, dict[str, Any]] = {}
    while not wanted <= set(found):
        line = await process.stdout.readline()
        assert line, f"the server closed stdout; answered {sorted(found)} of {sorted(wanted)}"
        message = json.loads(line)
        if isinstance(message.get("id"), int):
            found[message["id"]] = message
    return found


@pytest.mark.parametrize("server", ["crm", "templates", "docs"])
async def test_a_lone_surrogate_gets_a_typed_invalid_input_answer(tmp_path, server):
    arguments, extra_environment, tool, tool_arguments = _servers(tmp_path)[server]
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY_ROOT), **extra_environment}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *arguments,
        cwd=str(REPOSITORY_ROOT),
        env=environment,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        lines = [
            INITIALIZE,
            INITIALIZED,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": tool, "arguments": tool_arguments},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "\udc00"}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        ]
        assert process.stdin is not None
        # json.dumps writes "\ud800" as the six ASCII characters \ud800: valid JSON, not valid Unicode
        process.stdin.write(b"".join(json.dumps(line).encode("ascii") + b"\n" for line in lines))
        await process.stdin.drain()
        answers = await asyncio.wait_for(_answers(process, {1, 2, 3, 4}), timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, 9)
        await asyncio.wait_for(process.wait(), timeout=10)
    called = answers[2]["result"]
    assert called["isError"] is True and called["structuredContent"]["code"] == "INVALID_INPUT"
    assert called["content"][0]["text"].startswith("INVALID_INPUT: ")
    listed = answers[3]["error"]
    assert listed["code"] == -32602 and listed["data"]["code"] == "INVALID_INPUT"
    assert "tools" in answers[4]["result"]  # the server goes on serving
