"""JSON-RPC 2.0 messages as dicts, and its error codes: the production side's one helper (pure).

Where it sits: under the codecs that speak JSON-RPC (``protocols/acp/codec.py``: ACP over stdio;
``protocols/codex/app_codec.py``: codex app-server, which leaves the ``"jsonrpc"`` member out) and the kernel
tools' MCP side (``tools/mcp_endpoint.py``, ``tools/loopback_http.py``). They build every request,
notification, result and error here, so the members and their order are written once; encoding a
line stays theirs. The stand-ins (``elynav_nb/sandbox``) keep their own on purpose: they are the
peers the tests trust, and must not share our mistakes.

    JSON_RPC.request("1", "initialize", {...}) -> {"jsonrpc": "2.0", "id": "1", "method": ..., "params": ...}
    UNTAGGED.error(7, METHOD_NOT_FOUND, "no")  -> {"id": 7, "error": {"code": -32601, "message": "no"}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSON_RPC",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "UNTAGGED",
    "JsonRpc",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_VERSION = {"jsonrpc": "2.0"}


@dataclass(frozen=True)
class JsonRpc:
    """How one peer writes JSON-RPC 2.0: ``tagged`` puts ``"jsonrpc": "2.0"`` first in every message."""

    tagged: bool = True

    def _message(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {**_VERSION, **fields} if self.tagged else fields

    def request(self, request_id: Any, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return self._message({"id": request_id, "method": method, "params": dict(params)})

    def notification(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A notification (``params`` left out when None)."""
        fields: dict[str, Any] = {"method": method}
        if params is not None:
            fields["params"] = dict(params)
        return self._message(fields)

    def result(self, request_id: Any, result: Any) -> dict[str, Any]:
        return self._message({"id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> dict[str, Any]:
        return self._message({"id": request_id, "error": {"code": code, "message": message}})


JSON_RPC = JsonRpc()
"""JSON-RPC 2.0 as the specification writes it (ACP, MCP)."""

UNTAGGED = JsonRpc(tagged=False)
"""codex app-server's JSON-RPC: the same messages without the ``"jsonrpc"`` member."""
