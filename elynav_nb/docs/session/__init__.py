"""Live Docs sessions: ``DocsSession`` (one document, open in a notebook) and ``DocsSessionPool``.

Where it sits: the public face of ``elynav_nb.docs``, above its layer folders (``live``,
``blocknote``, ``markdown``, ``rest``): a session composes them and the comment threads
(``docs.comments``); it is no layer of its own, so it has a folder beside them rather than a place
in ``live/``. ``docs_session`` holds the class; the ``_`` modules are its parts (opening, owner
task, saves and durability, change feeds, display); ``pool`` keeps sessions per document.
"""

from elynav_nb.docs.session.docs_session import DocsSession, RemoteChange, RemoteChanges, SaveResult

__all__ = ["DocsSession", "RemoteChange", "RemoteChanges", "SaveResult"]
