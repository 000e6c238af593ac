"""ipywidgets views of elynav_nb objects; importing this package registers them.

Where it sits: above the capabilities. Capabilities never import widgets: their
``_repr_mimebundle_`` asks ``elynav_nb._display`` for a registered view, and this package
registers one per class it can show (``Turn`` -> ``TurnView``, ``AgentRunner`` -> ``RunnerView``,
``Templates`` -> ``TemplatesView``, ``DocsSession`` -> ``DocsSessionView``, ``LiveNotebook`` ->
``LiveNotebookView``, ``Office`` -> ``OfficeBoard``).
Views of other capabilities live in their own modules here; importing one registers its view.
"""

from __future__ import annotations

from elynav_nb._display import register_view
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.widgets import (  # the first four register their views
    docs_view,
    notebook_view,
    office_board,
    templates_view,
    throttle,
    turn_view,
)
from elynav_nb.widgets.office_board import OfficeBoard
from elynav_nb.widgets.throttle import ThrottledText
from elynav_nb.widgets.turn_view import PermissionPrompt, RunnerView, TurnView

__all__ = [
    "OfficeBoard",
    "PermissionPrompt",
    "RunnerView",
    "ThrottledText",
    "TurnView",
    "docs_view",
    "notebook_view",
    "office_board",
    "templates_view",
    "throttle",
    "turn_view",
]

register_view(Turn, TurnView)
register_view(AgentRunner, RunnerView)
