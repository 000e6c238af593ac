"""The magics in terminal IPython (no widgets): the answer is the cell's printed output, as it streams.

Before, ``%agent sdr Bonjour`` there printed only ``<Turn starting agent='elynav-sdr' events=0 ...>``,
before the turn ran, and the answer showed nowhere until ``_.text``.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from elynav_nb.agents import AgentStarted, TextDelta, ToolResult, ToolUse
from elynav_nb.magics import extension

pytest.importorskip("IPython")


def test_an_agent_line_in_terminal_ipython_prints_its_answer(tmp_path: Path) -> None:
    lines = [
        "%load_ext elynav_nb",
        f"%config ElynavMagics.workspace = {str(tmp_path)!r}",
        '%config ElynavMagics.executable = "standin"',
        "%agent sdr Bonjour du terminal",
        'print("kept:", _.outcome)',
        "%agent sdr @standin api-error",
        'print("after the failure")',
        "%elynav_stop",
    ]
    completed = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "--simple-prompt"],
        input="\n".join(lines) + "\nexit\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    shown = completed.stdout
    answer = shown.index("You said: Bonjour du terminal")
    assert answer < shown.index("kept: completed")
    assert "<Turn" not in shown  # not the object, its answer
    failure = shown[shown.index("kept: completed") : shown.index("after the failure")]
    assert "AGENT_PROCESS_ERROR:" in failure and "Traceback" not in failure  # one line


@pytest.mark.anyio
async def test_the_answer_is_written_as_each_event_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    written = io.StringIO()
    monkeypatch.setattr(sys, "stdout", written)
    seen_before_next: list[str] = []

    class Streaming:
        async def __aiter__(self) -> AsyncIterator[object]:
            for event in (
                AgentStarted(session_id="s-1", model="m"),
                TextDelta("Bon"),
                TextDelta("jour"),
                ToolUse(id="t-1", name="Bash", input={"command": "ls"}),
                ToolResult(tool_use_id="t-1", content="a.txt\nb.txt"),
            ):
                yield event
                await asyncio.sleep(0)
                seen_before_next.append(written.getvalue())

    await extension._print_events(Streaming())
    assert seen_before_next[:3] == ["", "Bon", "Bonjour"]  # each piece out (flushed) before the next event
    assert written.getvalue() == ('Bonjour\n  → Bash {"command": "ls"}\n  ← ok (11 characters): a.txt …\n\n')
