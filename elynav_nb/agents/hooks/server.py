"""``HookCommandServer``: the runner's end of command hooks, a Unix socket in a private folder, with a secret.

Where it sits: started by the per-turn driver for a gemini runner with hooks (gemini runs hooks as
commands: ``protocols/gemini/hooks.py``), stopped with the runner. Each hook command (``hooks/command.py``)
connects, sends one line ``{"token", "cli", "input"}``, and reads one line back: what ``serve``
(``HookRunner.serve`` in the protocol's dialect) answered.

Who may call it: the socket lives in a folder only this user can open (``mkdtemp``, mode 0700), and
a request must carry the runner's token (``secrets.token_hex``, in ``<folder>/token``, mode 0600),
compared in constant time (as bytes: any text compares); a request without it gets a deny and is
logged at WARNING. No port is opened. ``stop()`` closes the server and removes the folder.

Every connection gets one answer line: a request that is not one line of JSON within
``FIRST_LINE_SECONDS`` (none at all, too slow, over ``_LINE_LIMIT``, not JSON, nested too deep) is
answered with a deny whose reason starts ``PROTOCOL_ERROR:``, then closed; a hook callback that fails
is a deny saying so, its text redacted (``_redaction.redact_for_model``).

How data flows::

    CLI -> hook command -> socket line -> token checked -> serve(cli, input) -> one answer line
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from elynav_nb._redaction import describe_exception

__all__ = ["HookCommandServer"]

logger = logging.getLogger(__name__)

_LINE_LIMIT = 16 * 1024 * 1024
FIRST_LINE_SECONDS = 5.0
"""How long a connection may take to send its request line (the hook command sends it at once)."""
HookServe = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class HookCommandServer:
    """One runner's hook socket (see the module docstring)."""

    def __init__(self, serve: HookServe) -> None:
        self._serve = serve
        self._server: asyncio.AbstractServer | None = None
        self.folder: Path | None = None
        self._token = ""

    @property
    def running(self) -> bool:
        return self._server is not None

    def command(self, cli: str) -> list[str]:
        """The hook command line a CLI runs (``start()`` first)."""
        assert self.folder is not None, "start() first"
        return [sys.executable, str(Path(__file__).with_name("command.py")), str(self.folder), cli]

    async def start(self) -> None:
        """Open the socket (idempotent)."""
        if self._server is not None:
            return
        folder = Path(tempfile.mkdtemp(prefix="elynav-hooks-"))
        os.chmod(folder, 0o700)
        token = secrets.token_hex(32)
        token_file = folder / "token"
        descriptor = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(token)
        self._server = await asyncio.start_unix_server(
            self._handle, path=str(folder / "socket"), limit=_LINE_LIMIT
        )
        self.folder = folder
        self._token = token

    async def stop(self) -> None:
        """Close the socket and remove the folder (idempotent)."""
        server, folder = self._server, self.folder
        self._server = None
        self.folder = None
        if server is not None:
            server.close()
            await server.wait_closed()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await asyncio.wait_for(reader.readline(), timeout=FIRST_LINE_SECONDS)
            except TimeoutError:
                answer = _refusal(f"no request line within {FIRST_LINE_SECONDS:g} s")
            except ValueError:  # asyncio's LimitOverrunError: a line over the limit
                answer = _refusal(f"the request line is longer than {_LINE_LIMIT} bytes")
            else:
                answer = await self._answer(line)
            writer.write(json.dumps(answer).encode("utf-8") + b"\n")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass  # the hook command went away: the CLI has given up on it
        finally:
            writer.close()

    async def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            return _refusal("the hook request is not one line of JSON text (or it nests too deep)")
        token = request.get("token") if isinstance(request, dict) else None
        if not isinstance(token, str) or not hmac.compare_digest(
            token.encode("utf-8", "surrogatepass"), self._token.encode("ascii")
        ):
            logger.warning("a hook request without the runner's token was refused")
            return {
                "decision": "deny",
                "reason": "Denied: the hook request did not carry the runner's token.",
            }
        hook_input = request.get("input")
        try:
            return await self._serve(
                str(request.get("cli") or ""), hook_input if isinstance(hook_input, dict) else {}
            )
        except Exception as error:  # never leave the CLI without an answer: a deny it reads
            what = describe_exception(error, max_chars=300)
            return {"decision": "deny", "reason": f"Denied: the hook failed ({what})."}


def _refusal(what: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": f"Denied: PROTOCOL_ERROR: {what}."}
