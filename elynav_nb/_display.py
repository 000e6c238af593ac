"""How capability objects find their ipywidgets view without importing widgets.

Where it sits: capabilities call ``rich_bundle(obj)`` from their ``_repr_mimebundle_``; the
``elynav_nb.widgets`` package calls ``register_view`` for each class it can show when it is
imported, which ``rich_bundle`` does lazily the first time it runs inside a notebook kernel (so
``import elynav_nb`` stays light for scripts, the CLI and MCP servers). Capabilities never import
widgets; an object shows a live widget in a kernel, HTML elsewhere and ``repr`` in a terminal.
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["in_notebook_kernel", "register_view", "rich_bundle", "view_for"]

_view_factories: dict[type, Callable[[Any], Any]] = {}
# object -> its view, weakly on both sides: the object's own listener list keeps a live view alive.
_live_views: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()


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


def rich_bundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The MIME bundle for ``obj``: its widget view in a kernel, else its HTML; ``repr`` as text."""
    bundle: dict[str, Any] = {}
    if in_notebook_kernel():
        importlib.import_module("elynav_nb.widgets")  # registers the views (once)
        view = view_for(obj)
        if view is not None:
            bundle.update(view._repr_mimebundle_(include=include, exclude=exclude) or {})
    if "application/vnd.jupyter.widget-view+json" not in bundle:
        html = getattr(obj, "_repr_html_", None)
        if html is not None:
            bundle["text/html"] = html()
    bundle["text/plain"] = repr(obj)
    return bundle
