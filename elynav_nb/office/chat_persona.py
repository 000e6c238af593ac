"""Each employee of the office as a persona of JupyterLab's chat (jupyter-ai's persona manager).

Where it sits: loaded by jupyter-ai's persona manager through the ``jupyter_ai.personas`` entry points
(the six Elynav agents: ``SdrPersona``...; ``employee_persona(name)`` makes the class of any other
employee, for a ``.jupyter/personas/*persona*.py`` file). Only the chat server imports it (the
``chat`` extra). It reaches the office of the chat's workspace as the user, through
``OfficeClient`` (``office/client.py``): attaching to the office a kernel, ``elynav office serve``
or ``elynav acp`` runs, or hosting one in the chat server when none does (``Office.start()``).

How a chat message flows (a ``BasePersona`` of our own, not ``BaseAcpPersona``: it shows the office)::

    on_message (before jupyter-ai's per-persona lock): the ask is queued in the office at once, so it
      takes its FIFO place among the notebooks', terminals' and agents' asks; while it waits the
      chat says so ("Waiting in elynav-sdr's queue: next, busy for user.")
    process_message (under the lock, in arrival order): the answer streams into one chat message
      (text; tool calls as short lines); a failed or timed-out ask ends with its code; the cost last
    Stop (cancel_response, on the message in flight) -> the user's cancel of that ask (it cascades);
      the messages queued behind it keep their places, as in jupyter-ai
    a permission prompt of the employee: said in the chat; it is answered on the office board (the
      office denies it after its timeout when nobody answers)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

from jupyter_ai_persona_manager import BasePersona, PersonaDefaults  # the chat extra

from elynav_nb.agents.events import PermissionRequest, TextDelta, ToolResult, ToolUse
from elynav_nb.errors import ElynavError
from elynav_nb.office.acp_agent import waiting_text
from elynav_nb.office.asks import Reply
from elynav_nb.office.client import OfficeClient, Position, RemoteAsk
from elynav_nb.office.office import Office

__all__ = [
    "CmoPersona",
    "ContentPersona",
    "DevExecutorPersona",
    "DevProposerPersona",
    "ElynavEmployeePersona",
    "OrchestratorPersona",
    "SdrPersona",
    "employee_persona",
]

AVATAR = str(Path(__file__).with_name("persona_avatar.svg"))
EXECUTABLE_VARIABLE = "ELYNAV_CHAT_OFFICE_EXECUTABLE"
"""The CLI of an office the chat server hosts itself (``standin``, or a command); default: as ``Office``."""

_OFFICES: dict[Path, Office] = {}  # workspace -> the Office this server process attached to or hosts
_OFFICE_LOCK = asyncio.Lock()


async def office_client(workspace: Path) -> OfficeClient:
    """The client of the office serving ``workspace``; attached to (or, when none serves, hosted by) one
    ``Office`` of this process, shared by every persona of the server."""
    async with _OFFICE_LOCK:
        office = _OFFICES.get(workspace)
        if (
            office is None
            or office.status != "open"
            or (office.attachment and office.attachment.status != "open")
        ):
            executable = os.environ.get(EXECUTABLE_VARIABLE) or None
            office = await Office(workspace, executable=executable).start()
            _OFFICES[workspace] = office
        if office.attachment is not None:
            return office.attachment.client
        assert office.socket_path is not None
        return OfficeClient(office.socket_path, office.user_token)


class ElynavEmployeePersona(BasePersona):  # type: ignore[misc]
    """The chat persona of one employee (``employee``: its agent name). See the module docstring."""

    employee: ClassVar[str] = ""
    employee_description: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._asks: dict[str, RemoteAsk] = {}  # chat message id -> its ask, queued before the lock
        self._current: RemoteAsk | None = None

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name=self.employee,
            description=self.employee_description or f"{self.employee}, an employee of the elynav office",
            avatar_path=AVATAR,
            system_prompt="(the employee's own agent definition)",
            slash_commands=set(),
        )

    def _workspace(self) -> Path:
        return Path(self.get_workspace_dir()).resolve()

    async def on_message(self, message: Any) -> None:
        """Queue the ask in the office now (its FIFO place), say its place, then let jupyter-ai process it."""
        text = _without_mentions(str(message.body), self.name)
        try:
            client = await office_client(self._workspace())
            remote = await client.submit(self.employee, text)
        except ElynavError as error:
            self.send_message(f"**{error.code}**: {error.message}")
            return
        self._asks[message.id] = remote
        if remote.position:
            busy_for = await _busy_for(remote)
            self.send_message(waiting_text(self.employee, remote.position, busy_for).strip())
        await super().on_message(message)

    async def process_message(self, message: Any) -> None:
        remote = self._asks.pop(message.id, None)
        if remote is None:
            return
        self._current = remote
        try:
            await self.stream_message(_chunks(remote))
        finally:
            self._current = None
            await remote.close()

    async def cancel_response(self) -> None:
        """Stop in the chat: the user's cancel of the ask in flight (it cascades to what it waits on)."""
        if self._current is not None:
            await self._current.cancel()

    async def shutdown(self) -> None:
        for remote in [*self._asks.values(), *([self._current] if self._current else [])]:
            await remote.close()
        self._asks.clear()


async def _busy_for(remote: RemoteAsk) -> str | None:
    """Who the employee works for, as the office's first place line says (bounded; None if it is slow)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(2.0):
            while remote.busy_for is None and remote.status == "queued":
                await asyncio.sleep(0.02)
    return remote.busy_for


async def _chunks(remote: RemoteAsk) -> AsyncIterator[str]:
    """The chat message of one ask: its text as it streams, tool calls as lines, how it ended."""
    async for update in remote.updates():
        if isinstance(update, TextDelta):
            yield update.text
        elif isinstance(update, ToolUse):
            yield f"\n\n`{update.name}` …\n\n"
        elif isinstance(update, ToolResult) and update.is_error:
            yield "\n\n(the tool failed)\n\n"
        elif isinstance(update, PermissionRequest):
            yield (
                f"\n\n**{remote.agent} asks permission** to use `{update.tool_name}`: answer it on the office "
                "board (Allow / Deny); nobody answering denies it.\n\n"
            )
        elif isinstance(update, Position):
            continue
        elif isinstance(update, Reply):
            yield _ending(update)


def _ending(reply: Reply) -> str:
    if reply.ok:
        return (
            f"\n\n<sub>{reply.agent} · ask {reply.ask_id} · ${reply.cost_usd:.4f}</sub>"
            if reply.cost_usd
            else ""
        )
    who = f" by {reply.cancelled_by}" if reply.cancelled_by else ""
    return f"\n\n**{reply.outcome}{who}** ({reply.error_code}: {reply.error})"


def _without_mentions(body: str, name: str) -> str:
    """The message without this persona's ``@name`` mention (other ``@`` words are the user's text)."""
    return re.sub(rf"(^|\s)@{re.escape(name)}\b", " ", body).strip() or body


def employee_persona(name: str, description: str = "") -> type[ElynavEmployeePersona]:
    """The persona class of employee ``name`` (for a workspace's own agents, in a
    ``.jupyter/personas/elynav_persona.py``: ``MyPersona = employee_persona("w-a")``)."""
    class_name = "".join(part.capitalize() for part in re.split(r"[^0-9A-Za-z]+", name) if part) + "Persona"
    namespace = {"employee": name, "employee_description": description, "__module__": __name__}
    return type(class_name, (ElynavEmployeePersona,), namespace)


OrchestratorPersona = employee_persona("elynav-orchestrator", "Plans the work and delegates it to the others")
SdrPersona = employee_persona("elynav-sdr", "Sales development: prospects, accounts, outreach in the CRM")
CmoPersona = employee_persona("elynav-cmo", "Marketing strategy and campaigns")
ContentPersona = employee_persona("elynav-content", "Writes the content: posts, pages, documents")
DevProposerPersona = employee_persona("elynav-dev-proposer", "Proposes code changes")
DevExecutorPersona = employee_persona("elynav-dev-executor", "Carries out approved code changes")
