"""elynav_nb: the Elynav agent platform in JupyterLab (public API assembled in this module)."""

from elynav_nb.errors import ElynavError

__all__ = ["ElynavError"]
__version__ = "0.1.0"
