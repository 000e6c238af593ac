"""``DocsSessionView``: a live view of a ``DocsSession`` that re-renders when the document changes.

Where it sits: above ``elynav_nb.docs`` (widgets subscribe to capability events; the session never
imports this). Importing the module registers the view for ``DocsSession``, so displaying a session
in a kernel shows it; outside a kernel the session shows its static HTML.

How data flows (``live_html.LiveHtmlView``)::

    session.add_change_listener(request)      a remote edit (a person typing in a browser), an acked
        -> RateLimiter (at most once per         write of ours, a save, closing
           min_interval, the last change
           always shown)
        -> widget.value = session's HTML      title, status, save state, the blocks (each block's
                                                 inline markdown shown as bold, italic, links...:
                                                 ``docs.inline_html``, every character escaped)
"""

from __future__ import annotations

from elynav_nb._display import register_view
from elynav_nb.docs.session import DocsSession
from elynav_nb.widgets.live_html import LiveHtmlView

__all__ = ["DocsSessionView"]


class DocsSessionView(LiveHtmlView):
    """The session's HTML in an ``ipywidgets.HTML``, re-rendered at most once per ``min_interval``."""

    def __init__(self, session: DocsSession, *, min_interval: float = 0.25) -> None:
        super().__init__(session, min_interval=min_interval)

    @property
    def session(self) -> DocsSession:
        return self.source  # type: ignore[no-any-return]

    def _label(self) -> str:
        return repr(self.session.title)


register_view(DocsSession, DocsSessionView)
