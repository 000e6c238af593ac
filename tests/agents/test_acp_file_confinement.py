"""The ACP client's fs methods against a hostile local process (issue 28, items 4 and 7).

A swapper thread turns a folder of the workspace into a symbolic link to the outside and back, in a
loop, while the agent reads and writes through it: nothing outside is ever read or written. A hard
link to an outside file is refused. Text that is not valid Unicode is a typed refusal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from elynav_nb.agents.protocols.acp.files import WorkspaceFiles
from elynav_nb.errors import ElynavError, InvalidInput, PathOutsideWorkspace

RACE_SECONDS = 3.0


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "workspace"
    outside = tmp_path / "outside"
    for root, text in ((workspace, "inside"), (outside, "OUTSIDE-SECRET")):
        (root / "dir").mkdir(parents=True)
        (root / "dir" / "file.txt").write_text(text, encoding="utf-8")
    return workspace, outside


def _swap_until(stop: threading.Event, workspace: Path, outside: Path) -> int:
    """Swap workspace/dir for a link to outside/dir and back until ``stop``; how many swaps."""
    real = workspace / "dir.real"
    link = workspace / "dir"
    swaps = 0
    while not stop.is_set():
        try:
            os.rename(link, real)
            os.symlink(outside / "dir", link)
            swaps += 1
            os.unlink(link)
        except OSError:
            pass  # a write made a new dir/ while the real one was away (inside: allowed)
        _put_back(real, link)
    return swaps


def _put_back(real: Path, link: Path) -> None:
    while real.exists():
        if link.is_symlink():
            with contextlib.suppress(OSError):
                os.unlink(link)
        elif link.exists():
            shutil.rmtree(link, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rename(real, link)


@pytest.mark.parametrize("operation", ["read", "write"])
def test_a_folder_swapped_for_a_link_in_a_loop_never_lets_a_read_or_write_out(layout, operation) -> None:
    workspace, outside = layout
    files = WorkspaceFiles(workspace)
    stop = threading.Event()
    swaps: list[int] = []
    swapper = threading.Thread(
        target=lambda: swaps.append(_swap_until(stop, workspace, outside)), daemon=True
    )

    async def race() -> tuple[int, list[str], list[str]]:
        done = 0
        leaked: list[str] = []
        untyped: list[str] = []
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            try:
                if operation == "read":
                    answer = await files.read_text_file({"path": str(workspace / "dir" / "file.txt")})
                    leaked += [answer["content"]] if answer["content"] != "inside" else []
                else:
                    await files.write_text_file(
                        {"path": str(workspace / "dir" / "written.txt"), "content": "x"}
                    )
                done += 1
            except ElynavError:
                pass  # the folder was away or a link at that instant: refused, typed
            except OSError as error:
                untyped.append(repr(error))
        return done, leaked, untyped

    swapper.start()
    try:
        done, leaked, untyped = asyncio.run(race())
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert not swapper.is_alive() and swaps and swaps[0] > 100, swaps
    assert done > 10, done
    assert leaked == [], f"{len(leaked)} of {done} reads returned the outside file"
    assert sorted(path.name for path in outside.rglob("*")) == ["dir", "file.txt"]  # nothing written there
    assert untyped == [], untyped[:3]  # every refusal typed


def test_a_hard_link_to_an_outside_file_is_refused_for_reads_and_writes(layout) -> None:
    workspace, outside = layout
    files = WorkspaceFiles(workspace)
    os.link(outside / "dir" / "file.txt", workspace / "linked.txt")
    with pytest.raises(PathOutsideWorkspace, match="hard links"):
        asyncio.run(files.read_text_file({"path": str(workspace / "linked.txt")}))
    with pytest.raises(PathOutsideWorkspace, match="hard links"):
        asyncio.run(files.write_text_file({"path": str(workspace / "linked.txt"), "content": "changed"}))
    assert (outside / "dir" / "file.txt").read_text(encoding="utf-8") == "OUTSIDE-SECRET"


def test_a_link_anywhere_in_the_path_is_refused_even_one_that_stays_inside(layout) -> None:
    workspace, _ = layout
    files = WorkspaceFiles(workspace)
    (workspace / "alias").symlink_to(workspace / "dir")
    (workspace / "file-alias.txt").symlink_to(workspace / "dir" / "file.txt")
    for path in (workspace / "alias" / "file.txt", workspace / "file-alias.txt"):
        with pytest.raises(PathOutsideWorkspace, match="link"):
            asyncio.run(files.read_text_file({"path": str(path)}))
    with pytest.raises(PathOutsideWorkspace, match="link"):
        asyncio.run(files.write_text_file({"path": str(workspace / "alias" / "new.txt"), "content": "x"}))
    assert not (workspace / "dir" / "new.txt").exists()


def test_a_fifo_is_refused_without_blocking(layout) -> None:
    workspace, _ = layout
    os.mkfifo(workspace / "pipe")
    with pytest.raises(InvalidInput, match="regular file"):
        asyncio.run(
            asyncio.wait_for(WorkspaceFiles(workspace).read_text_file({"path": str(workspace / "pipe")}), 10)
        )


@pytest.mark.parametrize(
    "params",
    [
        {"path": "/tmp/\ud800.txt", "content": "x"},
        {"path": "WORKSPACE/dir/new.txt", "content": "a lone \udfff surrogate"},
    ],
    ids=["path", "content"],
)
def test_text_that_is_not_unicode_is_a_typed_refusal(layout, params) -> None:
    workspace, _ = layout
    files = WorkspaceFiles(workspace)
    given = {key: value.replace("WORKSPACE", str(workspace)) for key, value in params.items()}
    with pytest.raises(InvalidInput, match="Unicode"):
        asyncio.run(files.write_text_file(given))
    assert not (workspace / "dir" / "new.txt").exists()
    assert [path.name for path in (workspace / "dir").iterdir()] == ["file.txt"]  # no temporary file left
