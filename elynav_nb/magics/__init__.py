"""IPython magics for agents and the office: ``%load_ext elynav_nb`` (see ``extension.py``).

``interpolation.py`` (``{expression}`` in a message) and ``cells.py`` (a magic cell rewritten into one
``await``) are pure; ``extension.py`` holds the magics. IPython is imported only here, on ``%load_ext``.
"""

from __future__ import annotations

from elynav_nb.magics.extension import ElynavMagics, load_ipython_extension, unload_ipython_extension

__all__ = ["ElynavMagics", "load_ipython_extension", "unload_ipython_extension"]
