"""The ACP client's fs and terminal methods: confined to the workspace, bounded, nothing half written."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from elynav_nb.agents.protocols.acp.files import WorkspaceFiles
from elynav_nb.agents.protocols.acp.terminals import WorkspaceTerminals
from elynav_nb.errors import InvalidInput, NotFound, PathOutsideWorkspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return folder


def test_read_whole_and_by_lines(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    path = str(workspace / "notes.txt")
    assert asyncio.run(files.read_text_file({"path": path})) == {"content": "one\ntwo\nthree\n"}
    assert asyncio.run(files.read_text_file({"path": path, "line": 2, "limit": 1})) == {"content": "two\n"}


def test_paths_outside_the_workspace_are_refused(workspace: Path, tmp_path: Path) -> None:
    files = WorkspaceFiles(workspace)
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret", encoding="utf-8")
    (workspace / "link").symlink_to(secret)
    for path in (str(secret), str(workspace / ".." / "secret.txt"), str(workspace / "link")):
        with pytest.raises(PathOutsideWorkspace):
            asyncio.run(files.read_text_file({"path": path}))
    with pytest.raises(PathOutsideWorkspace):
        asyncio.run(files.write_text_file({"path": str(tmp_path / "evil.txt"), "content": "x"}))
    assert not (tmp_path / "evil.txt").exists()
    with pytest.raises(InvalidInput):
        asyncio.run(files.read_text_file({"path": "notes.txt"}))  # ACP paths are absolute


def test_missing_big_and_binary_files_are_typed(workspace: Path) -> None:
    files = WorkspaceFiles(workspace, max_read_bytes=10)
    with pytest.raises(NotFound):
        asyncio.run(files.read_text_file({"path": str(workspace / "nope.txt")}))
    with pytest.raises(InvalidInput, match="more than"):
        asyncio.run(files.read_text_file({"path": str(workspace / "notes.txt")}))
    (workspace / "blob.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidInput, match="UTF-8"):
        asyncio.run(files.read_text_file({"path": str(workspace / "blob.bin")}))


def test_write_replaces_whole_and_keeps_the_mode(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    target = workspace / "notes.txt"
    os.chmod(target, 0o640)
    assert asyncio.run(files.write_text_file({"path": str(target), "content": "new"})) == {}
    assert target.read_text(encoding="utf-8") == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    nested = workspace / "a" / "b.txt"
    asyncio.run(files.write_text_file({"path": str(nested), "content": "deep"}))
    assert nested.read_text(encoding="utf-8") == "deep"
    assert [path.name for path in workspace.iterdir() if path.name.endswith(".tmp")] == []


def test_a_failed_write_leaves_the_old_file(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    with pytest.raises(InvalidInput):
        asyncio.run(files.write_text_file({"path": str(workspace / "notes.txt"), "content": 3}))
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"


async def _run_terminal(
    terminals: WorkspaceTerminals, **params: object
) -> tuple[dict[str, object], dict[str, object]]:
    created = await terminals.create(dict(params))
    status = await terminals.wait_for_exit(created)
    output = await terminals.output(created)
    await terminals.release(created)
    return status, output


def test_terminal_runs_a_command_line_and_argv(workspace: Path) -> None:
    terminals = WorkspaceTerminals(workspace, {"PATH": os.environ["PATH"], "GREETING": "hi"})

    async def scenario() -> None:
        status, output = await _run_terminal(terminals, command="echo $GREETING; pwd; exit 3")
        assert status == {"exitCode": 3, "signal": None}
        assert output["output"] == f"hi\n{workspace.resolve()}\n" and output["truncated"] is False
        assert output["exitStatus"] == status
        status, output = await _run_terminal(
            terminals, command="printf", args=["%s-%s", "a", "b"], env=[{"name": "X", "value": "1"}]
        )
        assert status["exitCode"] == 0 and output["output"] == "a-b"

    asyncio.run(scenario())


def test_terminal_output_is_cut_from_the_start(workspace: Path) -> None:
    terminals = WorkspaceTerminals(workspace, dict(os.environ))

    async def scenario() -> None:
        _, output = await _run_terminal(terminals, command="printf 'abcdefé'", outputByteLimit=3)
        assert output["truncated"] is True
        assert output["output"] == "fé"  # é is two bytes: the cut never splits it

    asyncio.run(scenario())


def test_terminal_cwd_must_stay_inside(workspace: Path, tmp_path: Path) -> None:
    terminals = WorkspaceTerminals(workspace, dict(os.environ))
    with pytest.raises(PathOutsideWorkspace):
        asyncio.run(terminals.create({"command": "ls", "cwd": str(tmp_path)}))
    with pytest.raises(NotFound):
        asyncio.run(terminals.output({"terminalId": "nope"}))


def test_a_command_past_its_time_is_killed_with_its_children(workspace: Path) -> None:
    terminals = WorkspaceTerminals(workspace, dict(os.environ), timeout=0.5)

    async def scenario() -> None:
        created = await terminals.create({"command": "sleep 60 & sleep 60; wait"})
        status = await terminals.wait_for_exit(created)
        assert status == {"exitCode": None, "signal": "SIGKILL"}

    asyncio.run(scenario())


def test_end_all_kills_every_running_command(workspace: Path) -> None:
    terminals = WorkspaceTerminals(workspace, dict(os.environ))

    async def scenario() -> list[int]:
        for _ in range(2):
            await terminals.create({"command": "sleep 60"})
        pids = terminals.pids()
        assert len(pids) == 2 and terminals.live == 2
        assert await terminals.end_all() == 2
        return pids

    pids = asyncio.run(scenario())
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert terminals.live == 0


def test_too_many_terminals_are_refused(workspace: Path) -> None:
    terminals = WorkspaceTerminals(workspace, dict(os.environ), max_terminals=1)

    async def scenario() -> None:
        await terminals.create({"command": "sleep 30"})
        with pytest.raises(InvalidInput, match="release one first"):
            await terminals.create({"command": "sleep 30"})
        await terminals.end_all()

    asyncio.run(scenario())
