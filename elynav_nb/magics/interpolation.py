"""``{expression}`` in a magic's cell body, filled from the user's namespace (pure: no I/O, no IPython).

Where it sits: used by ``elynav_nb.magics.extension`` before a cell's text goes to an agent. The rule
is jupyter-ai's (``str.format_map`` over the user namespace): ``{name}``, ``{name.attribute}``,
``{name[key]}``, ``{In[3]}``, ``{Out[2]}`` and ``{_}`` are replaced by their ``str()``, ``{{`` and
``}}`` stay literal braces, and ``{name!r}`` / ``{value:.2f}`` work as in ``str.format``. A name that
is not defined is an ``INVALID_INPUT`` naming it (never a silent empty string).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elynav_nb.errors import InvalidInput

__all__ = ["interpolate"]


class _Namespace(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise InvalidInput(
            f"{{{key}}} in the cell names nothing defined in this kernel: define {key} first, "
            "or write {{ and }} for literal braces",
            details={"name": key},
        )


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """``text`` with each ``{field}`` replaced from ``namespace`` (see the module docstring)."""
    try:
        return text.format_map(_Namespace(namespace))
    except InvalidInput:
        raise
    except (ValueError, IndexError, KeyError, AttributeError, TypeError) as error:
        raise InvalidInput(
            f"the cell's {{...}} fields could not be filled ({type(error).__name__}: {error}); "
            "write {{ and }} for literal braces",
        ) from None
