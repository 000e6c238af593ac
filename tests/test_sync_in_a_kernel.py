"""The ``*_sync`` methods in a real IPython kernel: refused on the kernel's own loop, unless the person
applied nest-asyncio there themselves (the library never does it for them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip(
    "nest_asyncio2", reason="nest-asyncio2 is the lab extra's opt-in (pip install 'elynav-nb[lab]')"
)
pytest.importorskip("jupyter_client.manager")

from tests.kernel import Kernel  # noqa: E402 (after the skip)

pytestmark = pytest.mark.slow


def run_in_kernel(code: str) -> list[str]:
    """Run ``code`` as one cell of a fresh python3 kernel; return its stdout lines (errors re-raised)."""
    kernel = Kernel()
    try:
        lines, errors = kernel.run(code)
    finally:
        kernel.shutdown()
    assert errors == [], errors
    return lines


def test_send_sync_on_the_kernel_loop_is_refused_then_runs_nested_after_the_user_applies_nest_asyncio(
    tmp_path: Path,
) -> None:
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from elynav_nb.agents import AgentRunner
        from elynav_nb.errors import SyncCallInsideLoop

        print("patched by the library:", hasattr(asyncio.get_running_loop(), "_nest_patched"))
        runner = await AgentRunner(None, {str(tmp_path)!r}, executable="standin").start()
        try:
            runner.send_sync("refused")
        except SyncCallInsideLoop as error:
            print("before apply:", error.code)

        import nest_asyncio2
        nest_asyncio2.apply()
        print("after apply:", runner.send_sync("nested").outcome)
        print("next await works:", (await runner.send("awaited")).outcome)
        await runner.stop()
        print("status:", runner.status)
        """
    )
    lines = run_in_kernel(code)
    assert lines == [
        "patched by the library: False",
        "before apply: SYNC_CALL_INSIDE_LOOP",
        "after apply: completed",
        "next await works: completed",
        "status: closed",
    ]
