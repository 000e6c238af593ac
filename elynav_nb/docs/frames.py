"""The Hocuspocus frame codec under its first path, ``elynav_nb.docs.frames``, which notebook 03 taught.

Where it sits: a thin alias kept for users' code; the codec is ``elynav_nb.docs.live.frames`` (the
live layer), and everything here is that module's own objects. New code imports ``live.frames``.
"""

from elynav_nb.docs.live.frames import *  # noqa: F403
from elynav_nb.docs.live.frames import __all__ as __all__
