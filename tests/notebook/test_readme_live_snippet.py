"""The README's live-notebook snippets, run as written in the kernel of a notebook on a real Jupyter server.

``tests/test_readme_snippets.py`` runs the README's other snippets on the stand-ins; the blocks marked
``<!-- readme-snippet: live -->`` need what only this tier has: a Jupyter server with real-time
collaboration that started the kernel for a notebook (``LiveNotebook.current()`` finds both from there).
Each runs as one cell of that notebook's kernel, on both backends; then an independent peer of the room
sees what it wrote.
"""

from __future__ import annotations

import pytest

from elynav_nb.notebook import LiveNotebook
from elynav_nb.notebook.kernel import KernelClient
from tests.test_readme_snippets import readme_snippets
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, wait_until

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


async def test_the_readme_live_snippets_run_as_written_in_a_notebook_kernel(live_server, notebook_path):
    snippets = readme_snippets("live")
    assert snippets, "the README has no live snippet"
    async with LiveNotebook.open(
        notebook_path, server_url=live_server.base_url, token=live_server.token
    ) as nb:
        kernel_id = await nb.api.start_kernel_for(notebook_path)
        kernel = KernelClient(nb.api, kernel_id)
        try:
            for line, code in snippets:
                ran = await kernel.run(code, timeout=120)
                traceback = [
                    "\n".join(output.get("traceback", []))
                    for output in ran.outputs
                    if output["output_type"] == "error"
                ]
                assert ran.status == "ok", f"README.md line {line}:\n{''.join(traceback)}\n{code}"
        finally:
            await kernel.close()
    async with RawPeer.join(live_server, notebook_path) as peer:
        await wait_until(lambda: len(peer.cells) == 4, what="the snippet's two cells in the room")
        chart = peer.cells[-1]
        assert chart["source"] == "sales.groupby('region').size()" and chart["execution_count"] is not None
        shown = "".join(str(output.get("data", {}).get("text/plain", "")) for output in chart["outputs"])
        assert "N" in shown and "E" in shown  # the updated data cell ran before it (four rows, three regions)
