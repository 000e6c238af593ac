"""The Jupyter server's REST side for a live notebook: which backend, the room's URL, contents, kernels.

Where it sits: the REST I/O layer of ``elynav_nb.notebook``; ``live.py`` asks it for the room URL
before each (re)connection and ``kernel.py`` for the notebook's kernel. It parses only HTTP statuses
and small JSON bodies; the token goes in an ``Authorization: token`` header (REST) or the socket's
``?token=`` (the only way a browser WebSocket can carry it) and is never in a repr, a log or an error.

The two backends (facts measured in ``docs/notebook-live-protocol.md``)::

    jupyter-collaboration 5.x   PUT /api/collaboration/session/<path> {"format": "json", "type": "notebook"}
                                -> {fileId, sessionId}
                                ws /api/collaboration/room/json:notebook:<fileId>?sessionId=..&token=..
    jupyter-server-documents    (no session endpoint: 404) POST /api/fileid/index?path=<path> -> {id}
                                ws /api/collaboration/room/json:notebook:<id>?token=..
    both                        ws /api/collaboration/room/JupyterLab:globalAwareness?token=..

The session endpoint answers 201 even for a path that does not exist, so the file is checked first
(``GET /api/contents/<path>?content=0``): a missing one is ``NOTEBOOK_NOT_FOUND``.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any, Final

import httpx

from elynav_nb.errors import AuthRequired, InvalidInput, NotebookNotFound, ServiceError

__all__ = ["COLLABORATION", "SERVER_DOCUMENTS", "JupyterServerApi", "RoomAddress"]

COLLABORATION: Final = "jupyter-collaboration"
SERVER_DOCUMENTS: Final = "jupyter-server-documents"
_TIMEOUT: Final = 10.0


@dataclass(frozen=True)
class RoomAddress:
    """Where a notebook's room is: ``backend``, ``room_id`` (``json:notebook:<file id>``) and the
    WebSocket URL without the token (``url_with_token`` adds it, for the connection only)."""

    backend: str
    room_id: str
    file_id: str
    url: str

    def url_with_token(self, token: str) -> str:
        separator = "&" if "?" in self.url else "?"
        return f"{self.url}{separator}token={urllib.parse.quote(token, safe='')}" if token else self.url


class JupyterServerApi:
    """REST calls to one Jupyter server (``base_url`` such as ``http://127.0.0.1:8888/``)."""

    def __init__(self, base_url: str, token: str) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InvalidInput(f"the Jupyter server URL must be http(s)://host:port/..., not {base_url!r}")
        self.base_url = base_url.rstrip("/") + "/"
        self._token = token
        headers = {"Authorization": f"token {token}"} if token else {}
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=_TIMEOUT)
        self.backend: str | None = None

    def __repr__(self) -> str:
        return f"JupyterServerApi({self.base_url!r}, backend={self.backend!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a JupyterServerApi holds a token and cannot be pickled")

    @property
    def token(self) -> str:
        return self._token

    def websocket_base(self) -> str:
        parsed = urllib.parse.urlsplit(self.base_url)
        scheme = "wss" if parsed.scheme == "https" else "ws"
        return urllib.parse.urlunsplit((scheme, parsed.netloc, parsed.path, "", ""))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ServiceError(
                f"the Jupyter server at {self.base_url} cannot be reached ({type(error).__name__})"
            ) from None
        if response.status_code in (401, 403):
            raise AuthRequired("the Jupyter server refused the token (HTTP 403): give the server's token")
        return response

    async def check_notebook(self, path: str) -> dict[str, Any]:
        """The file's model without content; ``NOTEBOOK_NOT_FOUND`` when it is not there."""
        response = await self.request("GET", f"api/contents/{_quoted(path)}", params={"content": "0"})
        if response.status_code == 404:
            raise NotebookNotFound(
                f"no notebook at {path!r} on this Jupyter server (renamed, deleted or never there)",
                details={"path": path},
            )
        if response.status_code != 200:
            raise ServiceError(f"the Jupyter server answered HTTP {response.status_code} for {path!r}")
        model: dict[str, Any] = response.json()
        if model.get("type") != "notebook":
            raise InvalidInput(f"{path!r} is a {model.get('type')}, not a notebook")
        return model

    async def room_address(self, path: str) -> RoomAddress:
        """The notebook's room on this server's backend (the backend is found once, then kept)."""
        await self.check_notebook(path)
        quoted = _quoted(path)
        if self.backend in (None, COLLABORATION):
            response = await self.request(
                "PUT", f"api/collaboration/session/{quoted}", json={"format": "json", "type": "notebook"}
            )
            if response.status_code in (200, 201):
                self.backend = COLLABORATION
                body = response.json()
                room_id = f"json:notebook:{body['fileId']}"
                query = urllib.parse.urlencode({"sessionId": body["sessionId"]})
                url = f"{self.websocket_base()}api/collaboration/room/{room_id}?{query}"
                return RoomAddress(COLLABORATION, room_id, str(body["fileId"]), url)
            if response.status_code != 404 or self.backend is not None:
                raise ServiceError(f"the collaboration session endpoint answered HTTP {response.status_code}")
        response = await self.request("POST", "api/fileid/index", params={"path": path})
        if response.status_code not in (200, 201):
            raise ServiceError(
                "this Jupyter server has no real-time collaboration (neither jupyter-collaboration nor"
                f" jupyter-server-documents answered; HTTP {response.status_code})"
            )
        self.backend = SERVER_DOCUMENTS
        file_id = str(response.json()["id"])
        room_id = f"json:notebook:{file_id}"
        return RoomAddress(
            SERVER_DOCUMENTS, room_id, file_id, f"{self.websocket_base()}api/collaboration/room/{room_id}"
        )

    def global_awareness_url(self) -> str:
        return f"{self.websocket_base()}api/collaboration/room/JupyterLab:globalAwareness"

    async def kernel_of(self, path: str) -> str | None:
        """The id of the kernel of the notebook's session, if one runs."""
        response = await self.request("GET", "api/sessions")
        if response.status_code != 200:
            raise ServiceError(f"the sessions endpoint answered HTTP {response.status_code}")
        for session in response.json():
            if session.get("path") == path and session.get("kernel"):
                return str(session["kernel"]["id"])
        return None

    async def start_kernel_for(self, path: str, kernel_name: str = "python3") -> str:
        """Start a session (and its kernel) for the notebook, as JupyterLab does when it opens one."""
        body = {
            "path": path,
            "name": path.rsplit("/", 1)[-1],
            "type": "notebook",
            "kernel": {"name": kernel_name},
        }
        response = await self.request("POST", "api/sessions", json=body)
        if response.status_code not in (200, 201):
            raise ServiceError(f"the Jupyter server could not start a kernel (HTTP {response.status_code})")
        return str(response.json()["kernel"]["id"])

    async def kernel_state(self, kernel_id: str) -> tuple[str, str] | None:
        """The kernel's ``execution_state`` (``idle``, ``busy``, ``starting``, ``dead``...) and its
        ``last_activity`` as the server says them; None when the kernel is gone."""
        response = await self.request("GET", f"api/kernels/{kernel_id}")
        if response.status_code != 200:
            return None
        model = response.json()
        return str(model.get("execution_state")), str(model.get("last_activity", ""))

    def kernel_channels_url(self, kernel_id: str, session_id: str) -> str:
        query = urllib.parse.urlencode({"session_id": session_id})
        return f"{self.websocket_base()}api/kernels/{kernel_id}/channels?{query}"

    async def save_as_ipynb(self, path: str, content: dict[str, Any]) -> None:
        """Write ``content`` (nbformat JSON) to ``path`` through the contents API."""
        response = await self.request(
            "PUT",
            f"api/contents/{_quoted(path)}",
            json={"type": "notebook", "format": "json", "content": content},
        )
        if response.status_code not in (200, 201):
            raise ServiceError(f"the contents API answered HTTP {response.status_code} when saving {path!r}")


def _quoted(path: str) -> str:
    return urllib.parse.quote(path.strip("/"), safe="/")
