"""``Office``: one agent = one employee; asks queued FIFO, cancelled by the right people, never stuck.

Where it sits: the capability ``elynav_nb.office``, above ``elynav_nb.agents`` (the only other
capability it imports). It owns one ``Employee`` per agent definition (one runner, one canonical
session id each), the asks in flight, the workspace lock, the history file and the Unix socket
that agents use through ``elynav ask``. Widgets subscribe with ``add_listener``; the office never
imports them (``office.board()`` asks ``_display`` for the registered view).

How an ask flows::

    office.submit(to, text, sender) -> checks (agent, text, rights of the parent turn, DEADLOCK)
      -> Ask queued in the employee's FIFO (+ history "ask", timer at the deadline)
      -> _dispatch: the employee is free -> running -> _run: runner.start() (resume, or a new
         session if the old one cannot resume) -> runner.send(text) -> await the Turn
      -> _finish: Reply on the ask (+ history "end"), pending child asks cancelled (nobody waits
         for them any more), the employee takes the next ask in its queue

The class is split by responsibility: this module holds its state, life cycle, checks and public
asking and cancelling surface; ``office/ask_running.py`` (base class ``AskRunning``) runs the asks
(``_dispatch``, ``_run``, ``_finish``, ``_cancel``, ``_expire``); ``office/office_views.py`` (base
class ``OfficeViews``) is what it shows (``history()``, ``to_frame()``, ``board()``, listeners, repr).

Cancel: ``office.cancel(ask_id, by)`` checks the right (``office/rights.py``), then cancels every
ask the cancelled one waits on, at once (the logical cascade: no process has to die first), and
the ask itself: a queued ask leaves the queue without touching the employee; a running one gets
the CLI's ``interrupt`` (bounded, then forced stop steps). A deadline works the same way with the
``timeout`` outcome. Every path ends an ask with a ``Reply``: nothing is left pending.
"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.output_schema import OutputSchemaSpec, output_schema_of
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import (
    AgentBusy,
    AgentNotFound,
    AskNotFound,
    InvalidInput,
    NotAllowed,
    RunnerClosed,
)
from elynav_nb.office.ask_running import AskRunning
from elynav_nb.office.asks import Ask, Reply
from elynav_nb.office.cascade import check_no_cycle
from elynav_nb.office.employee import Employee
from elynav_nb.office.history import HistoryLog, utc_now
from elynav_nb.office.office_views import OfficeListener, OfficeViews
from elynav_nb.office.peers import Caller, identify_caller
from elynav_nb.office.rights import USER, check_cancel_right
from elynav_nb.office.socket_server import OfficeSocketServer
from elynav_nb.office.staffing import ASK_RULE, Executable, resolve_definitions, runner_for
from elynav_nb.office.trace import log_office
from elynav_nb.office.workspace import OfficeFiles

__all__ = ["ASK_RULE", "Office", "OfficeListener"]


class Office(AskRunning, OfficeViews):
    """The agents of a workspace as employees: FIFO asks, cancel rights, cascading cancel, one history.

    ``agents``: names or ``AgentDefinition``s; ``None`` takes every agent defined in
    ``<workspace>/.claude/agents`` (the six Elynav agents are installed there when it has none).
    ``executable`` chooses the CLI like ``AgentRunner`` does (``None``: the real ``claude`` when on
    PATH, else the stand-in), or maps CLI names to commands for employees whose definitions name
    codex or gemini (see ``staffing.py``). ``ask_timeout`` bounds every ask from queueing to reply unless the
    ask names its own; ``tools`` maps agent names to their kernel tools (as ``AgentRunner(tools=...)``
    takes them: served from this kernel to that employee only); ``runner_options`` go to every
    ``AgentRunner``.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] = ".",
        agents: Sequence[str | AgentDefinition] | None = None,
        *,
        executable: Executable = None,
        ask_timeout: float = 3600.0,
        max_text_chars: int = 100_000,
        max_delegation_depth: int = 8,
        listen: bool = True,
        tools: Mapping[str, Any] | None = None,
        **runner_options: Any,
    ) -> None:
        if not (ask_timeout > 0 and math.isfinite(ask_timeout)):
            raise InvalidInput("ask_timeout must be a positive number of seconds")
        self.workspace = Path(workspace).resolve()
        self.agent_choice = list(agents) if agents is not None else None
        self.executable = executable
        self.ask_timeout = ask_timeout
        self.max_text_chars = max_text_chars
        self.max_delegation_depth = max_delegation_depth
        self.listen = listen
        # A turn may last as long as its ask (waiting on a delegated ask is silence on stdout too).
        runner_options.setdefault("turn_timeout", ask_timeout)
        runner_options.setdefault("tool_idle_timeout", ask_timeout)
        runner_options.setdefault("history_limit", 100)  # the office's history file keeps every ask
        # A tool outside the agent's list asks the user (the board shows Allow / Deny on the ask's row);
        # nobody answering denies it after permission_timeout, so a silent prompt never holds the queue.
        runner_options.setdefault("permission_prompts", True)
        runner_options.setdefault("permission_timeout", 60.0)
        self.runner_options = runner_options
        # agent name -> its kernel tools, as AgentRunner(tools=...) takes them (refused here when bad)
        self.tools: dict[str, Any] = {}
        if tools:
            from elynav_nb.agents.kernel_tool_server import serve_tools

            for name, agent_tools in tools.items():
                self.tools[name], _ = serve_tools(agent_tools)
        self.employees: dict[str, Employee] = {}
        self.status = "new"
        self.files = OfficeFiles(self.workspace)
        self.history_log = HistoryLog(self.files.history_path)
        self.socket_server: OfficeSocketServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._asks: dict[str, Ask] = {}
        self._finished_order: deque[str] = deque()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: list[OfficeListener] = []
        self._sessions: dict[str, str] = {}

    # -- life cycle ----------------------------------------------------------------------------------

    @property
    def socket_path(self) -> Path | None:
        return self.socket_server.path if self.socket_server is not None else None

    async def start(self) -> Office:
        """Lock the workspace, close what a dead office left open, make the employees, listen. Idempotent."""
        if self.status == "open":
            return self
        if self.status == "closed":
            raise RunnerClosed("this office was stopped; make a new Office")
        self._loop = asyncio.get_running_loop()
        self.files.lock()
        try:
            unfinished = self.history_log.end_unfinished("the office stopped before this ask ended")
            definitions = await asyncio.to_thread(resolve_definitions, self.workspace, self.agent_choice)
            self._sessions = self.files.load_sessions()
            if self.listen:
                self.socket_server = OfficeSocketServer(self)
                await self.socket_server.start()
                assert self.socket_server.directory is not None
                self.files.record_socket_folder(self.socket_server.directory)
            unknown = sorted(set(self.tools) - {definition.name for definition in definitions})
            if unknown:
                raise InvalidInput(
                    f"tools= names agents this office does not have: {', '.join(unknown)}",
                    details={"agents": unknown},
                )
            for definition in definitions:
                self.employees[definition.name] = self._make_employee(definition)
        except BaseException:
            await self._release()
            raise
        self.status = "open"
        note = f"office started with {len(self.employees)} employees"
        if unfinished:
            note += f"; {len(unfinished)} asks left unfinished by the previous office were marked failed"
        self.history_log.note(note)
        log_office(self, note)
        return self

    def _make_employee(self, definition: AgentDefinition) -> Employee:
        token = secrets.token_hex(16)
        runner = self._make_runner(definition, token, resume=self._sessions.get(definition.name))
        return Employee(definition, runner, token)

    def _make_runner(self, definition: AgentDefinition, token: str, *, resume: str | None) -> AgentRunner:
        return runner_for(
            definition,
            self.workspace,
            token=token,
            socket_path=self.socket_path,
            ask_timeout=self.ask_timeout,
            executable=self.executable,
            resume=resume,
            runner_options=self._options_for(definition.name),
        )

    def _options_for(self, agent_name: str) -> dict[str, Any]:
        agent_tools = self.tools.get(agent_name)
        return self.runner_options if agent_tools is None else {**self.runner_options, "tools": agent_tools}

    async def stop(self) -> None:
        """End every ask (queued: cancelled; running: interrupted), stop every CLI, unlock. Idempotent, bounded."""
        if self.status in ("closed", "new"):
            self.status = "closed"
            return
        self.status = "closing"
        for ask in list(self._asks.values()):
            self._cancel(ask, by=USER, outcome="cancelled", reason="the office stopped")
        pending = [ask.settled() for ask in self._asks.values() if not ask.done]
        if pending:
            await asyncio.wait(pending, timeout=30.0)
        for ask in list(self._asks.values()):  # a CLI that ignored everything: settle it anyway
            if not ask.done:
                self._finish(ask, self._synthetic(ask, "failed", "the office stopped", "OFFICE_STOPPED"))
        if self._tasks:  # a CLI start under way ends (it sees its ask ended), bounded
            await asyncio.wait(list(self._tasks), timeout=10.0)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(  # after the tasks: a start they left half done is stopped too
            *(employee.runner.stop() for employee in self.employees.values()), return_exceptions=True
        )
        self.history_log.note("office stopped")
        log_office(self, "office stopped")
        await self._release()
        self.status = "closed"
        self._notify("stopped", None)

    async def _release(self) -> None:
        if self.socket_server is not None:
            await self.socket_server.close()
        self.files.unlock()

    async def __aenter__(self) -> Office:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- asking --------------------------------------------------------------------------------------

    def employee(self, name: str) -> Employee:
        """The employee called ``name`` (``"sdr"`` finds ``elynav-sdr``), or ``AGENT_NOT_FOUND``."""
        found = self.employees.get(name) or self.employees.get(f"elynav-{name}")
        if found is None:
            raise AgentNotFound(
                f"the office has no agent {name!r}; its employees: {', '.join(self.employees) or 'none'}",
                details={"agent": name},
            )
        return found

    def submit(
        self,
        to: str,
        text: str,
        *,
        sender: str = USER,
        timeout: float | None = None,
        parent: Ask | str | None = None,
        output_schema: OutputSchemaSpec | None = None,
    ) -> Ask:
        """Queue an ask and return its handle at once (``await ask`` for the ``Reply``).

        ``sender`` is ``"user"`` or an employee's name. An ask sent in an agent's name while that
        agent is working belongs to its running ask (``parent``): cancelling that one cancels this
        one, and a wait-for cycle is refused with ``DEADLOCK``. ``output_schema`` asks for a
        structured answer, as ``AgentRunner.send`` does (``reply.data``, ``reply.to_frame()``;
        ``OUTPUT_INVALID`` when the answer does not match; a bad schema is ``INVALID_INPUT`` here).
        """
        self._require_open()
        self._require_own_loop("submit")
        schema = output_schema_of(output_schema)
        employee = self.employee(to)
        sender_name = sender if sender == USER else self.employee(sender).name
        self._check_text(text)
        bound = self._check_timeout(timeout)
        parent_ask = self._parent_for(sender_name, parent)
        if parent_ask is not None:
            self._check_depth(parent_ask)
        if parent_ask is not None or sender_name == employee.name:  # an agent never waits on itself
            check_no_cycle(sender_name, employee.name, self._waits_for)
        assert self._loop is not None
        ask = Ask(
            self,
            uuid.uuid4().hex[:12],
            sender_name,
            employee.name,
            text,
            parent=parent_ask,
            queued_at=utc_now(),
            deadline=self._deadline(bound, parent_ask),
            output_schema=schema,
        )
        self._asks[ask.id] = ask
        if parent_ask is not None:
            parent_ask.children.append(ask)
        employee.queue.append(ask)
        self.history_log.append(
            {
                "record": "ask",
                "ask_id": ask.id,
                "parent_id": ask.parent_id,
                "sender": ask.sender,
                "agent": ask.agent,
                "prompt": ask.text,
                "queued_at": ask.queued_at,
            }
        )
        self._timers[ask.id] = self._loop.call_at(
            ask.deadline, self._expire, ask, ask.deadline - self._loop.time()
        )
        self._notify("queued", ask)
        self._dispatch(employee)
        return ask

    async def ask(
        self,
        to: str,
        text: str,
        *,
        sender: str = USER,
        timeout: float | None = None,
        parent: Ask | str | None = None,
        output_schema: OutputSchemaSpec | None = None,
    ) -> Reply:
        """``await office.ask(to, text)``: queue it and wait for its ``Reply`` (interrupting the cell cancels it).

        ``output_schema``: a structured answer in ``reply.data`` (see ``submit``)."""
        return await self.submit(
            to, text, sender=sender, timeout=timeout, parent=parent, output_schema=output_schema
        )

    def try_ask(
        self,
        to: str,
        text: str,
        *,
        sender: str = USER,
        timeout: float | None = None,
        parent: Ask | str | None = None,
        output_schema: OutputSchemaSpec | None = None,
    ) -> Ask:
        """Like ``submit``, but ``AGENT_BUSY`` instead of queueing when the employee is not free."""
        self._require_open()
        employee = self.employee(to)
        if employee.busy or employee.queue:
            raise AgentBusy(
                f"{employee.name} is busy (for {employee.caller}, {len(employee.queue)} waiting); "
                "use submit() to queue the ask",
                details={
                    "agent": employee.name,
                    "caller": employee.caller,
                    "queue_length": len(employee.queue),
                },
            )
        return self.submit(
            to, text, sender=sender, timeout=timeout, parent=parent, output_schema=output_schema
        )

    def submit_for(
        self,
        caller: Caller,
        to: str,
        text: str,
        *,
        timeout: float | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> Ask:
        """An ask arriving over the socket: the caller's own running ask is its parent."""
        if caller.is_user:
            return self.submit(to, text, timeout=timeout, output_schema=output_schema)
        running = self.employee(caller.name).current
        if running is None:
            raise InvalidInput(
                f"{caller.name} is not working on an ask: only a running turn may ask another agent",
                details={"agent": caller.name},
            )
        return self.submit(
            to, text, sender=caller.name, timeout=timeout, parent=running, output_schema=output_schema
        )

    def identify(self, pid: int) -> Caller:
        """The caller behind a process id (``office/peers.py``)."""
        processes = [process for employee in self.employees.values() if (process := employee.agent_process())]
        tokens = {employee.name: employee.token for employee in self.employees.values()}
        return identify_caller(pid, processes, tokens)

    def _require_open(self) -> None:
        if self.status == "new":
            raise RunnerClosed("the office is not started: await office.start() first")
        if self.status != "open":
            raise RunnerClosed(f"the office is {self.status}: make a new Office")

    def _require_own_loop(self, method: str) -> None:
        """``INVALID_INPUT`` outside the office's event loop (terminal IPython runs it only in ``await`` lines)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not self._loop:
            raise InvalidInput(
                f"office.{method}() runs on the office's event loop, which does not run here: call it from "
                "a coroutine or a line with `await` (in terminal IPython: `reply = await office.ask(...)`)",
                details={"method": method},
            )

    def _check_text(self, text: object) -> None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("an ask needs a non-empty text")
        if len(text) > self.max_text_chars:
            raise InvalidInput(
                f"an ask's text is limited to {self.max_text_chars} characters, got {len(text)}",
                details={"limit": self.max_text_chars, "length": len(text)},
            )

    def _check_timeout(self, timeout: float | None) -> float:
        if timeout is None:
            return self.ask_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (0 < timeout < math.inf):
            raise InvalidInput("timeout must be a positive number of seconds")
        return float(timeout)

    def _parent_for(self, sender: str, parent: Ask | str | None) -> Ask | None:
        if parent is None:
            running = self.employees[sender].current if sender != USER else None
            return self._parent_for(sender, running) if running is not None else None
        parent_ask = parent if isinstance(parent, Ask) else self.get_ask(parent)
        if parent_ask.cancelling:
            raise NotAllowed(
                f"ask {parent_ask.id} is being cancelled: its turn may not ask anyone any more",
                details={"parent_id": parent_ask.id},
            )
        if parent_ask.done or parent_ask.agent != sender:
            raise InvalidInput(
                f"ask {parent_ask.id} is not a running ask of {sender}: it cannot be the parent",
                details={"parent_id": parent_ask.id},
            )
        return parent_ask

    def _deadline(self, bound: float, parent: Ask | None) -> float:
        """Now + ``bound``, but never later than the deadline of the ask it was sent from."""
        assert self._loop is not None
        deadline = self._loop.time() + bound
        return min(deadline, parent.deadline) if parent is not None else deadline

    def _check_depth(self, parent: Ask) -> None:
        depth, ancestor = 1, parent
        while ancestor.parent is not None:
            depth, ancestor = depth + 1, ancestor.parent
        if depth >= self.max_delegation_depth:
            raise InvalidInput(
                f"delegation chains are limited to {self.max_delegation_depth} asks",
                details={"limit": self.max_delegation_depth},
            )

    def _waits_for(self, agent: str) -> list[str]:
        """The agents that ``agent``'s running turn waits on (its pending asks)."""
        employee = self.employees.get(agent)
        if employee is None or employee.current is None:
            return []
        return [child.agent for child in employee.current.pending_children()]

    def get_ask(self, ask_id: str) -> Ask:
        ask = self._asks.get(ask_id)
        if ask is None:
            raise AskNotFound(f"no ask {ask_id!r} in this office", details={"ask_id": ask_id})
        return ask

    def queue_position(self, ask: Ask) -> int:
        """0 while running (or ended), else 1 for the next ask to run."""
        queue = self.employees[ask.agent].queue
        return queue.index(ask) + 1 if ask in queue else 0

    @property
    def asks(self) -> list[Ask]:
        """The asks not ended yet (running ones first, then by queue order)."""
        running = [employee.current for employee in self.employees.values() if employee.current is not None]
        queued = [ask for employee in self.employees.values() for ask in employee.queue]
        return running + queued

    # -- cancelling ------------------------------------------------------------------------------------

    def cancel(self, ask_id: str | Ask, *, by: str = USER, reason: str = "") -> Ask:
        """Cancel an ask as ``by`` (the user, or the agent that sent it), with everything it waits on.

        ``NOT_ALLOWED`` for anyone else (nothing changes); idempotent; returns the ask (``await`` it).
        """
        ask = ask_id if isinstance(ask_id, Ask) else self.get_ask(ask_id)
        caller = by if by == USER else self.employee(by).name
        check_cancel_right(ask_id=ask.id, ask_sender=ask.sender, agent=ask.agent, caller=caller)
        self._cancel(ask, by=caller, outcome="cancelled", reason=reason or f"cancelled by {caller}")
        return ask
