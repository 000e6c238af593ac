"""ipywidgets views of elynav_nb objects; importing this package registers them.

Where it sits: above the capabilities. Capabilities never import widgets: their
``_repr_mimebundle_`` asks ``elynav_nb._display`` for a registered view, and this package
registers one per class it can show (``Turn`` -> ``TurnView``, ``AgentRunner`` -> ``RunnerView``).
Views of other capabilities live in their own modules here and are imported when present.
"""

from __future__ import annotations

import importlib.util

from elynav_nb._display import register_view
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.widgets import throttle, turn_view
from elynav_nb.widgets.throttle import ThrottledText
from elynav_nb.widgets.turn_view import PermissionPrompt, RunnerView, TurnView

__all__ = ["PermissionPrompt", "RunnerView", "ThrottledText", "TurnView", "throttle", "turn_view"]

register_view(Turn, TurnView)
register_view(AgentRunner, RunnerView)

if importlib.util.find_spec("elynav_nb.widgets.templates_view") is not None:
    import elynav_nb.widgets.templates_view  # noqa: F401  (registers the template views)
