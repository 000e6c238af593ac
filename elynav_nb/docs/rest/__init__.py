"""Docs over REST: documents and their saved content, the tree, and the shared HTTP layer.

Where it sits: the REST I/O layer of ``elynav_nb.docs``. ``http.DocsHttp`` makes every exchange
(headers from the credentials, the per-user throttle, deadlines, retries, body limits, typed
errors); ``documents.DocsRestClient`` names the document endpoints and owns one ``DocsHttp``;
``tree_client.DocsTreeClient`` (``client.tree``) the tree and lifecycle, with the typed records of
``tree``. ``from elynav_nb.docs.rest import DocsRestClient`` is the documented path.
"""

from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.docs.rest.http import API_PREFIX, DocsHttp, RequestThrottle, shared_throttle

__all__ = ["API_PREFIX", "DocsHttp", "DocsRestClient", "DocumentInfo", "RequestThrottle", "shared_throttle"]
