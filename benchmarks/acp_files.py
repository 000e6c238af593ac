"""The ACP client's confined file reads and writes: the openat walk against the resolve-then-open it replaced.

Ours: ``WorkspaceFiles`` (``elynav_nb/agents/protocols/acp/files.py``): the path opened part by part from a
held descriptor of the workspace with ``O_NOFOLLOW``, ``fstat`` checks (regular file, one link),
then read; a write to a temporary file in the held folder, fsync, rename, fsync of the folder.
Peer: the code it replaced (issue 28 item 4), inlined below: ``Path.resolve()``, a containment
check, then ``read_text`` by name (raceable), and ``_files.write_atomically`` by name.

Both run the same sync disk work in this process (no event loop), interleaved in rounds, on files
at depth 1 and depth 6 below the workspace. Run: ``python benchmarks/acp_files.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from elynav_nb._files import write_atomically
from elynav_nb.agents.protocols.acp.files import WorkspaceFiles, confined_parts

READS = 5000
WRITES = 200
ROUNDS = 5


def _old_read(workspace: Path, value: str) -> str:
    root = workspace.resolve()
    resolved = Path(value).resolve()
    if resolved != root and root not in resolved.parents:
        raise RuntimeError("outside")
    if not resolved.is_file():
        raise RuntimeError("missing")
    if resolved.stat().st_size > 8 * 1024 * 1024:
        raise RuntimeError("big")
    return resolved.read_text(encoding="utf-8")


def _old_write(workspace: Path, value: str, content: str) -> None:
    root = workspace.resolve()
    resolved = Path(value).resolve()
    if resolved != root and root not in resolved.parents:
        raise RuntimeError("outside")
    write_atomically(resolved, content)


def _timed(operation: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        operation()
    return (time.perf_counter() - started) / count * 1e6


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="elynav-bench-acp-files-") as scratch:
        workspace = Path(scratch) / "workspace"
        deep = workspace / "a" / "b" / "c" / "d" / "e"
        deep.mkdir(parents=True)
        targets = {"depth 1": workspace / "notes.txt", "depth 6": deep / "notes.txt"}
        for target in targets.values():
            target.write_text("une ligne de notes\n" * 50, encoding="utf-8")
        files = WorkspaceFiles(workspace)
        print(f"{'case':<16} {'ours µs':>10} {'peer µs':>10} {'ratio':>7}")
        for label, target in targets.items():
            value = str(target)

            def ours_read(value: str = value) -> str:
                root, parts = confined_parts(workspace, value)
                return files._read(root, parts, value)

            def ours_write(value: str = value) -> None:
                root, parts = confined_parts(workspace, value)
                files._write(root, parts, b"x" * 900, value)

            reads_ours, reads_peer, writes_ours, writes_peer = [], [], [], []
            for _ in range(ROUNDS):
                reads_ours.append(_timed(ours_read, READS))
                reads_peer.append(_timed(lambda value=value: _old_read(workspace, value), READS))
                writes_ours.append(_timed(ours_write, WRITES))
                writes_peer.append(
                    _timed(lambda value=value: _old_write(workspace, value, "x" * 900), WRITES)
                )
            for name, ours, peer in (
                (f"read {label}", reads_ours, reads_peer),
                (f"write {label}", writes_ours, writes_peer),
            ):
                ours_median, peer_median = statistics.median(ours), statistics.median(peer)
                print(
                    f"{name:<16} {ours_median:>10.1f} {peer_median:>10.1f} {ours_median / peer_median:>6.2f}x"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
