"""Every ``python`` snippet of the README runs as written, in order, in one kernel, on the stand-ins (issue 32, item 5).

A reader copies the README's snippets into notebook cells one after the other: each must run there as it
is written (top-level ``await``, the magics), without a name it never defined and without a CLI the
machine may not have. The snippets run in a real IPython kernel (jupyter_client) in a scratch folder,
with ``ELYNAV_AGENT_CLI=standin`` so that a real ``claude`` on the PATH is not used; a snippet that fails
names its README line. Whatever they leave running is stopped at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client.manager")

from tests.kernel import Kernel  # noqa: E402 (after the skip)

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPET = re.compile(
    r"^(<!-- readme-snippet: (\w+)[^\n]*-->\n)?```python\n(.*?)^```", re.MULTILINE | re.DOTALL
)


def readme_snippets(tier: str = "standin") -> list[tuple[int, str]]:
    """``(line, code)`` of each python block of the README of that tier, in order.

    A block runs on the stand-ins unless the comment line above it names another tier
    (``<!-- readme-snippet: live ... -->``: a Jupyter server with collaboration, run by the live tier).
    """
    text = README.read_text(encoding="utf-8")
    return [
        (text[: match.start(3)].count("\n") + 1, match.group(3))
        for match in SNIPPET.finditer(text)
        if (match.group(2) or "standin") == tier
    ]


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    started = Kernel()
    try:
        _, errors = started.run(
            f"""
            import os
            os.chdir({str(tmp_path)!r})
            os.environ.update(
                ELYNAV_AGENT_CLI="standin",
                ELYNAV_HOME={str(tmp_path / "home")!r},
                ELYNAV_STANDIN_HOME={str(tmp_path / "standin-home")!r},
                ELYNAV_ACP_STANDIN_HOME={str(tmp_path / "acp-standin-home")!r},
            )
            """
        )
        assert errors == []
        yield started
    finally:
        try:
            started.run(
                """
                import asyncio, gc
                from elynav_nb.agents import AgentRunner
                await asyncio.gather(
                    *(value.stop() for value in gc.get_objects() if isinstance(value, AgentRunner)),
                    return_exceptions=True,
                )
                for name in ("office", "doc", "sandbox"):
                    value = globals().get(name)
                    stop = getattr(value, "stop", None) or getattr(value, "close", None)
                    if stop is not None:
                        await stop()
                """,
                timeout=120,
            )
        finally:
            started.shutdown()


def test_the_readme_has_snippets_for_each_part() -> None:
    snippets = readme_snippets()
    assert len(snippets) >= 8 and len(readme_snippets("live")) >= 1
    assert any("%%agent" in code for _, code in snippets) and any("Office(" in code for _, code in snippets)


def test_each_readme_snippet_runs_as_written_in_order(kernel: Kernel) -> None:
    for line, code in readme_snippets():
        lines, errors = kernel.run(code, timeout=120)
        assert errors == [], f"README.md line {line}: {errors}\n{code}"
