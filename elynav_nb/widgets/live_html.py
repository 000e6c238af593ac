"""``LiveHtmlView``: a live object's HTML in an ``ipywidgets.HTML``, re-rendered when the object changes.

Where it sits: above the capabilities (widgets subscribe to capability events; capabilities never import
this). An object that offers ``add_change_listener`` / ``remove_change_listener`` and ``_repr_html_``
is shown by a subclass registered for its class: ``DocsSessionView`` (``docs_view.py``) for a La Suite
Docs session, ``LiveNotebookView`` (``notebook_view.py``) for a live notebook. In a kernel, displaying
the object shows the view; elsewhere the object shows its static HTML.

How data flows::

    obj.add_change_listener(request)           the object says what it shows may have changed
        -> RateLimiter (at most once per       (a remote edit, a write of ours, closing)
           min_interval, the last change
           always shown)
        -> widget.value = obj._repr_html_()    the object's own HTML (it escapes what it shows)

One view per object: displaying it again shows the same widget (``_display`` keeps it), so views never
pile up listeners. ``close()`` unsubscribes; the widget keeps its last rendering.
"""

from __future__ import annotations

from typing import Any

import ipywidgets  # type: ignore[import-untyped]

from elynav_nb.widgets.throttle import RateLimiter

__all__ = ["LiveHtmlView"]


class LiveHtmlView:
    """``source``'s HTML, re-rendered at most once per ``min_interval`` while the view is open."""

    def __init__(self, source: Any, *, min_interval: float = 0.25) -> None:
        self.source = source
        self.widget = ipywidgets.HTML(source._repr_html_())
        self._limiter = RateLimiter(self._render, min_interval=min_interval)
        self._closed = False
        source.add_change_listener(self._limiter.request)

    @property
    def render_count(self) -> int:
        return self._limiter.run_count

    @property
    def closed(self) -> bool:
        return self._closed

    def _render(self) -> None:
        self.widget.value = self.source._repr_html_()

    def close(self) -> None:
        """Stop following the object (the widget keeps its last rendering)."""
        self._closed = True
        self._limiter.cancel()
        self.source.remove_change_listener(self._limiter.request)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self.source)
        return bundle

    def _label(self) -> str:
        return type(self.source).__name__

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"renders={self.render_count}"
        return f"<{type(self).__name__} {self._label()} {state}>"
