"""The live notebook's widget view follows the room: a person's insert, the agent's writes, a run's [*]
and its end, at a bounded rate; displayed twice it is one view; closed, it stops."""

from __future__ import annotations

import asyncio

import pytest

import elynav_nb._display as display
from elynav_nb.notebook import LiveNotebook
from elynav_nb.widgets.notebook_view import LiveNotebookView
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, wait_until

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def open_live(server, path, **options):
    return LiveNotebook.open(path, server_url=server.base_url, token=server.token, **options)


async def test_the_view_follows_the_room_and_the_agents_runs(live_server, notebook_path, monkeypatch):
    monkeypatch.setattr(display, "in_notebook_kernel", lambda: True)
    async with open_live(live_server, notebook_path, user_name="Agent") as nb:
        bundle = nb._repr_mimebundle_()
        assert bundle[WIDGET_MIME]["model_id"] == nb._repr_mimebundle_()[WIDGET_MIME]["model_id"]  # one view
        view = display.view_for(nb)
        assert isinstance(view, LiveNotebookView) and bundle["text/plain"] == repr(nb)
        async with open_live(live_server, notebook_path, user_name="Person") as person:
            await person.insert_cell("typed_by_the_person = 1")
            await wait_until(lambda: "typed_by_the_person" in view.widget.value, what="the person's cell")
            await wait_until(lambda: "Person" in view.widget.value, what="the person listed as also here")
        cell_id = await nb.insert_cell("import time\nprint('step', flush=True)\ntime.sleep(1.5)\n'ran'")
        await wait_until(lambda: "print(&#x27;step&#x27;" in view.widget.value, what="the agent's cell")
        run = asyncio.get_running_loop().create_task(nb.run_cell(cell_id, timeout=60))
        await wait_until(lambda: "[*]" in view.widget.value, 30, "the run's [*] in the view")
        result = await run
        await wait_until(
            lambda: f"[{result.execution_count}]" in view.widget.value, what="the count in the view"
        )
        before = view.render_count
        async with RawPeer.join(live_server, notebook_path) as peer:  # a burst of 30 keystrokes
            source = peer.cell(cell_id)["source"]
            for number in range(30):
                with peer.notebook.ydoc.transaction():
                    source.insert(len(source), f"#{number}")
            await wait_until(lambda: "#29" in view.widget.value or "…" in view.widget.value, what="the burst")
        assert view.render_count - before < 30  # coalesced
        view.close()
        shown = view.widget.value
        await nb.insert_cell("after_the_view_closed = 1")
        await asyncio.sleep(0.4)
        assert view.widget.value == shown and "after_the_view_closed" not in shown
    assert "closed" in nb._repr_html_()
