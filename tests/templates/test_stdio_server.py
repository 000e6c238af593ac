"""``elynav mcp templates --agent NAME`` spawned as a subprocess, driven by a real MCP client over stdio."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.templates.policy import PolicyBook
from elynav_nb.templates.service import TemplateService

from .helpers import snapshot

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def _server_transport(home: Path, *extra_arguments: str):  # type: ignore[no-untyped-def]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "elynav_nb.cli", "mcp", "templates", *extra_arguments],
        env={"ELYNAV_HOME": str(home), "PYTHONPATH": str(REPOSITORY_ROOT)},
        cwd=str(REPOSITORY_ROOT),
    )
    return stdio_client(parameters, errlog=tempfile.TemporaryFile("w+"))  # a real fd, also under nbval


@pytest.mark.anyio
async def test_stdio_server_lists_and_enforces_the_agents_policy(home: Path) -> None:
    service = TemplateService.open(home)
    template = service.create("Code reviewer", "You review code.")
    # a durable grant for another agent, read by the server from policy.json
    service.store.save_policy_book(PolicyBook({"cmo": ["idea_template_create"]}))

    with anyio.fail_after(90):  # a guard against a hung child, not a speed check
        async with Client(_server_transport(home, "--agent", "sdr")) as client:
            listed = (await client.list_tools()).tools
            assert [tool.name for tool in listed] == ["idea_template_list", "idea_template_read"]
            assert all(tool.annotations is not None and tool.annotations.read_only_hint for tool in listed)

            read = await client.call_tool("idea_template_read", {"templateId": template.id})
            assert not read.is_error
            assert read.structured_content == template.to_dict()

            before = snapshot(home)
            refused = await client.call_tool("idea_template_delete", {"templateId": template.id})
            assert refused.is_error
            assert refused.structured_content is not None
            assert refused.structured_content["code"] == "NOT_ALLOWED"
            assert snapshot(home) == before

        async with Client(
            _server_transport(home, "--agent", "cmo", "--grant", "idea_template_update")
        ) as client:
            listed_names = [tool.name for tool in (await client.list_tools()).tools]
            assert listed_names == [
                "idea_template_list",
                "idea_template_read",
                "idea_template_create",
                "idea_template_update",
            ]
            updated = await client.call_tool(
                "idea_template_update", {"templateId": template.id, "content": "v2", "expectedVersion": 1}
            )
            assert updated.structured_content is not None and updated.structured_content["version"] == 2
            stale = await client.call_tool(
                "idea_template_update", {"templateId": template.id, "content": "v3", "expectedVersion": 1}
            )
            assert stale.is_error and stale.structured_content is not None
            assert stale.structured_content["code"] == "VERSION_CONFLICT"

    assert service.read(template.id).content_md == "v2"


def test_a_bad_grant_is_refused_with_its_code(home: Path) -> None:
    import subprocess

    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "elynav_nb.cli",
            "mcp",
            "templates",
            "--agent",
            "sdr",
            "--grant",
            "idea_template_read",
        ],
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("INVALID_INPUT: cannot grant 'idea_template_read'")
    assert completed.stdout == ""  # stdout belongs to the MCP protocol
