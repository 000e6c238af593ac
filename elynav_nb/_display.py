"""How capability objects find their ipywidgets view without importing widgets.

Where it sits: capabilities call ``rich_bundle(obj)`` from their ``_repr_mimebundle_``; the
``elynav_nb.widgets`` package calls ``register_view`` for each class it can show when it is
imported, which ``rich_bundle`` does lazily the first time it runs inside a notebook kernel (so
``import elynav_nb`` stays light for scripts, the CLI and MCP servers). Capabilities never import
widgets; an object shows a live widget in a kernel, HTML elsewhere and ``repr`` in a terminal.

A live object (a turn, an ask) is shown with ``show_live(obj, settled)`` from its
``_ipython_display_``: in a kernel, its bundle goes out with a display id, and once ``settled`` is
done the same display is updated with the object's final bundle (same widget, final ``text/plain``
and ``text/html``), so a notebook saved or reopened without widget state shows how it ended, not
how it started. The update is sent in the context of the cell running at that moment (a frontend
routes it by display id; nbclient only reads messages of the cell it runs), and again by
``refresh_live(obj)`` from whoever awaits the object, in the awaiting cell's own context.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import uuid
import weakref
from collections.abc import Callable
from typing import Any

__all__ = [
    "in_notebook_kernel",
    "plain_text",
    "refresh_live",
    "register_view",
    "rich_bundle",
    "show_live",
    "view_for",
]

_view_factories: dict[type, Callable[[Any], Any]] = {}
# object -> its view, weakly on both sides: the object's own listener list keeps a live view alive.
_live_views: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()
# object -> the display ids it was shown under (show_live), to update them once it settles.
_display_ids: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()


def register_view(object_class: type, factory: Callable[[Any], Any]) -> None:
    """Declare that objects of ``object_class`` are shown by ``factory(obj)`` (a widget view)."""
    _view_factories[object_class] = factory


def view_for(obj: Any) -> Any | None:
    """The live view of ``obj``, or ``None`` when no view is registered for its class.

    One view per object: displaying an object again shows the same widget (ipywidgets draws one
    model in several places) instead of a new view that would subscribe to the object once more.
    A view that was closed (``view.closed``) or collected is replaced by a new one.
    """
    cached = _cached_view(obj)
    if cached is not None:
        return cached
    for object_class in type(obj).__mro__:
        factory = _view_factories.get(object_class)
        if factory is not None:
            view = factory(obj)
            with contextlib.suppress(TypeError):  # objects without weak references are not cached
                _live_views[obj] = weakref.ref(view)
            return view
    return None


def _cached_view(obj: Any) -> Any | None:
    try:
        reference = _live_views.get(obj)
    except TypeError:  # unhashable, or no weak references
        return None
    view = reference() if reference is not None else None
    if view is None or getattr(view, "closed", False):
        return None
    return view


def in_notebook_kernel() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Notebook 7, VS Code), false in terminals and scripts."""
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]  # typed in newer IPython only
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def plain_text(obj: Any) -> str:
    """``obj`` as text: its ``_repr_pretty_`` (IPython's text form) where it has one, else ``repr``."""
    if getattr(obj, "_repr_pretty_", None) is None:
        return repr(obj)
    try:
        from IPython.lib.pretty import pretty
    except ImportError:
        return repr(obj)
    return str(pretty(obj))  # type: ignore[no-untyped-call, unused-ignore]


def rich_bundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The MIME bundle for ``obj``: its widget view in a kernel, its HTML, its text."""
    bundle: dict[str, Any] = {}
    if in_notebook_kernel():
        importlib.import_module("elynav_nb.widgets")  # registers the views (once)
        view = view_for(obj)
        if view is not None:
            bundle.update(view._repr_mimebundle_(include=include, exclude=exclude) or {})
    html = getattr(obj, "_repr_html_", None)
    if html is not None:  # beside a widget too: what a notebook viewer shows without widget state
        bundle["text/html"] = html()
    bundle["text/plain"] = plain_text(obj)
    return bundle


def show_live(obj: Any, settled: asyncio.Future[Any]) -> None:
    """Display ``obj``; in a kernel, with a display id updated with its final bundle once ``settled``.

    Outside a kernel (a terminal) it is shown once, as text: there is no display to update there.
    """
    from IPython.display import display

    if not in_notebook_kernel():
        display(rich_bundle(obj), raw=True)  # type: ignore[no-untyped-call]
        return
    display_id = uuid.uuid4().hex
    with contextlib.suppress(TypeError):
        _display_ids.setdefault(obj, []).append(display_id)
    display(rich_bundle(obj), raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
    reference = weakref.ref(obj)

    def update(_: asyncio.Future[Any]) -> None:
        live = reference()
        if live is not None:
            refresh_live(live)

    # An empty context: the update goes out as part of the cell that runs when the object settles
    # (the kernel's latest parent), not of the cell that displayed it, which may be long finished.
    settled.add_done_callback(update, context=contextvars.Context())


def refresh_live(obj: Any) -> None:
    """Update every display ``show_live`` made of ``obj`` with its current bundle (none: nothing)."""
    try:
        display_ids = list(_display_ids.get(obj, ()))
    except TypeError:
        return
    if not display_ids:
        return
    from IPython.display import update_display

    bundle = rich_bundle(obj)
    for display_id in display_ids:
        update_display(bundle, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
