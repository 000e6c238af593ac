"""``DocsSessionPool``: one open ``DocsSession`` per document, closed on its own after ``idle_ttl``.

Where it sits: beside ``DocsSession`` in ``docs/session/``; used by ``elynav mcp docs``
(``mcp.service``) and by scripts that touch many documents. ``get(link_or_id)`` opens a session (or reopens one that failed) and marks it used; a
reaper task closes the sessions left idle; ``close_all()`` closes everything (saving what is unsaved).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from elynav_nb.docs.addressing import parse_docs_url
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.session.docs_session import DocsSession
from elynav_nb.errors import ElynavError

__all__ = ["DocsSessionPool"]


class DocsSessionPool:
    """Open sessions per document, closed on their own after ``idle_ttl`` seconds without use."""

    def __init__(
        self,
        credentials: DocsCredentials | None = None,
        *,
        instance: str | None = None,
        idle_ttl: float = 300.0,
        reap_interval: float | None = None,
        **session_options: Any,
    ) -> None:
        self.credentials = credentials if credentials is not None else DocsCredentials.from_env()
        self.instance = instance
        self.idle_ttl = idle_ttl
        self.reap_interval = (
            reap_interval if reap_interval is not None else max(0.05, min(30.0, idle_ttl / 4))
        )
        self.session_options = session_options
        self._sessions: dict[str, DocsSession] = {}
        self._lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<DocsSessionPool open={len(self._sessions)} idle_ttl={self.idle_ttl:g}s>"

    def __len__(self) -> int:
        return len(self._sessions)

    async def get(self, link_or_id: str) -> DocsSession:
        """The open session for this document (opened, or re-opened if it failed)."""
        address = parse_docs_url(link_or_id, instance=self.instance or self.credentials.instance)
        async with self._lock:
            session = self._sessions.get(address.document_id)
            if session is not None and not session.is_open:
                await session.close(raise_save_error=False)
                session = None
            if session is None:
                session = await DocsSession.open(address.link, self.credentials, **self.session_options)
                self._sessions[address.document_id] = session
            session.last_used_at = time.monotonic()
            if self._reaper is None or self._reaper.done():
                self._reaper = asyncio.get_running_loop().create_task(self._reap())
            return session

    async def _reap(self) -> None:
        while self._sessions:
            await asyncio.sleep(self.reap_interval)
            now = time.monotonic()
            async with self._lock:
                for document_id, session in list(self._sessions.items()):
                    if now - session.last_used_at >= self.idle_ttl:
                        with contextlib.suppress(ElynavError):  # an unsaved state is kept and warned
                            await session.close(raise_save_error=False)
                        del self._sessions[document_id]

    async def close_all(self) -> None:
        async with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            with contextlib.suppress(ElynavError):  # an unsaved state is kept and warned
                await session.close(raise_save_error=False)
        if self._reaper is not None and not self._reaper.done():
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
