"""``DocsSessionView``: a live view of a ``DocsSession`` that re-renders when the document changes.

Where it sits: above ``elynav_nb.docs`` (widgets subscribe to capability events; the session never
imports this). Importing the module registers the view for ``DocsSession``, so displaying a session
in a kernel shows it; outside a kernel the session shows its static HTML.

How data flows::

    session.add_change_listener(request)      a remote edit (a person typing in a browser), an acked
        -> RateLimiter (at most once per         write of ours, a save, closing
           min_interval, the last change
           always shown)
        -> widget.value = session's HTML      title, status, save state, the blocks (each block's
                                                 inline markdown shown as bold, italic, links...:
                                                 ``docs.inline_html``, every character escaped)

One view per session: displaying the session again shows the same widget (``_display`` keeps it),
so views never pile up listeners. ``close()`` unsubscribes.
"""

from __future__ import annotations

from typing import Any

import ipywidgets  # type: ignore[import-untyped]

from elynav_nb._display import register_view
from elynav_nb.docs.session import DocsSession
from elynav_nb.widgets.throttle import RateLimiter

__all__ = ["DocsSessionView"]


class DocsSessionView:
    """The session's HTML in an ``ipywidgets.HTML``, re-rendered at most once per ``min_interval``."""

    def __init__(self, session: DocsSession, *, min_interval: float = 0.25) -> None:
        self.session = session
        self.widget = ipywidgets.HTML(session._repr_html_())
        self._limiter = RateLimiter(self._render, min_interval=min_interval)
        self._closed = False
        session.add_change_listener(self._limiter.request)

    @property
    def render_count(self) -> int:
        return self._limiter.run_count

    @property
    def closed(self) -> bool:
        return self._closed

    def _render(self) -> None:
        self.widget.value = self.session._repr_html_()

    def close(self) -> None:
        """Stop following the session (the widget keeps its last rendering)."""
        self._closed = True
        self._limiter.cancel()
        self.session.remove_change_listener(self._limiter.request)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self.session)
        return bundle

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"renders={self.render_count}"
        return f"<DocsSessionView {self.session.title!r} {state}>"


register_view(DocsSession, DocsSessionView)
