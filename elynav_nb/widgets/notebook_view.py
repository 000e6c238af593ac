"""``LiveNotebookView``: a live view of a ``LiveNotebook`` that re-renders as its cells change.

Where it sits: above ``elynav_nb.notebook`` (widgets subscribe to capability events; the notebook never
imports this). Importing the module registers the view for ``LiveNotebook``, so ``nb`` at the end of a
cell shows it in a kernel; outside a kernel the notebook shows its static HTML.

How data flows (``live_html.LiveHtmlView``)::

    nb.add_change_listener(request)   a person's edit or run, the agent's writes, a run's [*] and its
        -> RateLimiter                outputs as they come, closing
        -> widget.value = nb's HTML   the path, who is there, one row per cell (``notebook/render.py``)
"""

from __future__ import annotations

from elynav_nb._display import register_view
from elynav_nb.notebook import LiveNotebook
from elynav_nb.widgets.live_html import LiveHtmlView

__all__ = ["LiveNotebookView"]


class LiveNotebookView(LiveHtmlView):
    """The notebook's cells in an ``ipywidgets.HTML``, re-rendered at most once per ``min_interval``."""

    def __init__(self, notebook: LiveNotebook, *, min_interval: float = 0.25) -> None:
        super().__init__(notebook, min_interval=min_interval)

    @property
    def notebook(self) -> LiveNotebook:
        return self.source  # type: ignore[no-any-return]

    def _label(self) -> str:
        return repr(self.notebook.path)


register_view(LiveNotebook, LiveNotebookView)
