"""``Office``: one agent = one employee; asks queued FIFO, cancelled by the right people, never stuck.

Where it sits: the capability ``elynav_nb.office``, above ``elynav_nb.agents`` (the only other
capability it imports). It owns one ``Employee`` per agent definition (one runner, one canonical
session id each), the asks in flight, the workspace lock, the history file and the Unix socket
that agents use through ``elynav ask``, and other processes as the user (kernels attached to it,
``elynav acp``, the chat personas, terminals). One office per workspace: an ``Office`` whose
workspace is already served attaches to that office instead (``office/attached.py``). Widgets
subscribe with ``add_listener``; the office never imports them (``office.board()`` asks ``_display``
for the registered view).

How an ask flows::

    office.submit(to, text, sender) -> checks (agent, text, rights of the parent turn, DEADLOCK)
      -> Ask queued in the employee's FIFO (+ history "ask", timer at the deadline)
      -> AskEngine.dispatch: the employee is free -> running -> runner.start() (resume, or a new
         session if the old one cannot resume) -> runner.send(text) -> await the Turn
      -> AskEngine.finish: Reply on the ask (+ history "end"), pending child asks cancelled (nobody waits
         for them any more), the employee takes the next ask in its queue

The office is made of parts it owns: this module holds its life cycle and its public asking and
cancelling surface; the rules an ask must pass before it is queued are ``office/ask_rules.py``
(with ``cascade.py`` and ``rights.py``); the workspace lock, or the host office to attach to, is
``workspace.lock_or_find_host``; its ``AskEngine`` (``office/ask_running.py``) runs the asks
(queue, dispatch, run, finish, cancel, expire); ``OfficeListeners`` and the functions of
``office/office_views.py`` are what it shows (``history()``, ``to_frame()``, listeners, repr).

Cancel: ``office.cancel(ask_id, by)`` checks the right (``office/rights.py``), then cancels every
ask the cancelled one waits on, at once (the logical cascade: no process has to die first), and
the ask itself: a queued ask leaves the queue without touching the employee; a running one gets
the CLI's ``interrupt`` (bounded, then forced stop steps). A deadline works the same way with the
``timeout`` outcome. Every path ends an ask with a ``Reply``: nothing is left pending.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import math
import os
import secrets
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, cast

from elynav_nb._display import rich_bundle, view_for
from elynav_nb._sync import require_loop
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.options import RunnerOptions, options_or_keywords
from elynav_nb.agents.output_schema import output_schema_of
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import (
    AgentBusy,
    AgentNotFound,
    InvalidInput,
    OfficeUnreachable,
    RunnerClosed,
)
from elynav_nb.office.ask_rules import (
    capped_deadline,
    check_depth,
    checked_parent,
    checked_text,
    checked_timeout,
)
from elynav_nb.office.ask_running import AskEngine
from elynav_nb.office.asks import Ask, AskKeywords, AskOptions, Reply
from elynav_nb.office.attached import AskMirror, AttachedAsk, Attachment
from elynav_nb.office.cascade import check_no_cycle
from elynav_nb.office.client import OfficeClient
from elynav_nb.office.employee import Employee
from elynav_nb.office.history import HistoryLog, utc_now
from elynav_nb.office.office_views import (
    OfficeListener,
    OfficeListeners,
    employees_frame,
    history_of,
    office_html,
    office_text,
)
from elynav_nb.office.peers import Caller, identify_caller
from elynav_nb.office.rights import USER, check_cancel_right
from elynav_nb.office.socket_server import OfficeSocketServer
from elynav_nb.office.staffing import ASK_RULE, Executable, resolve_definitions, runner_for
from elynav_nb.office.trace import log_ask_event, log_office
from elynav_nb.office.workspace import OfficeFiles, lock_or_find_host, serving_office

if TYPE_CHECKING:
    import pandas

__all__ = ["ASK_RULE", "ATTACH_TIMEOUT", "Office", "OfficeListener"]

ATTACH_TIMEOUT = 30.0
"""Seconds an ``Office.start()`` waits for the office holding its workspace to listen, to attach to it."""


class Office:
    """The agents of a workspace as employees: FIFO asks, cancel rights, cascading cancel, one history.

    ``agents``: names or ``AgentDefinition``s; ``None`` takes every agent defined in
    ``<workspace>/.claude/agents`` (the six Elynav agents are installed there when it has none).
    ``executable`` chooses the CLI like ``AgentRunner`` does (``None``: the real ``claude`` when on
    PATH, else the stand-in), or maps CLI names to commands for employees whose definitions name
    codex or gemini (see ``staffing.py``). ``ask_timeout`` bounds every ask from queueing to reply unless the
    ask names its own; ``tools`` maps agent names to their kernel tools (as ``AgentRunner(tools=...)``
    takes them: served from this kernel to that employee only). Every employee's ``AgentRunner`` gets
    ``runner_options`` (a ``RunnerOptions``, as given), or else ``AgentRunner``'s keywords given here
    (``hooks=``, ``max_turns=``, ``stop_bounds=``...) over the office's defaults: turns as long as an
    ask, the last 100 results kept, permission prompts on (denied after 60 s unanswered).
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
        attach: bool = True,
        tools: Mapping[str, Any] | None = None,
        runner_options: RunnerOptions | None = None,
        **runner_keywords: Any,
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
        self.attach = attach
        self.attachment: Attachment | None = None  # set when start() attached to the serving office
        # A turn may last as long as its ask (waiting on a delegated ask is silence on stdout too);
        # the office's history file keeps every ask. A tool outside the agent's list asks the user
        # (the board shows Allow / Deny on the ask's row); nobody answering denies it after
        # permission_timeout, so a silent prompt never holds the queue.
        defaults = {
            "turn_timeout": ask_timeout,
            "tool_idle_timeout": ask_timeout,
            "history_limit": 100,
            "permission_prompts": True,
            "permission_timeout": 60.0,
        }
        self.runner_options = options_or_keywords(
            runner_options, runner_keywords, whose="the employees'", defaults=defaults
        )
        # agent name -> its kernel tools, as AgentRunner(tools=...) takes them (refused here when bad)
        self.tools: dict[str, Any] = {}
        if tools:
            from elynav_nb.agents.tools.kernel_tool_server import serve_tools

            for name, agent_tools in tools.items():
                self.tools[name], _ = serve_tools(agent_tools)
        self.employees: dict[str, Employee] = {}
        self.status = "new"
        self.files = OfficeFiles(self.workspace)
        self.history_log = HistoryLog(self.files.history_path)
        self.socket_server: OfficeSocketServer | None = None
        self.user_token = secrets.token_hex(16)  # makes a process that is no agent the user (peers.py)
        self.listeners = OfficeListeners(on_ask_event=lambda event, ask: log_ask_event(self, event, ask))
        self.engine = AskEngine(
            employees=self.employees,
            history_log=self.history_log,
            files=self.files,
            make_runner=lambda definition, token, resume: self._make_runner(definition, token, resume=resume),
            notify=self.listeners.notify,
        )

    # -- life cycle ----------------------------------------------------------------------------------

    @property
    def socket_path(self) -> Path | None:
        if self.attachment is not None:
            return self.attachment.client.socket_path
        return self.socket_server.path if self.socket_server is not None else None

    async def start(self) -> Office:
        """Lock the workspace, close what a dead office left open, make the employees, listen. Idempotent."""
        if self.status == "open":
            return self
        if self.status == "closed":
            raise RunnerClosed("this office was stopped; make a new Office")
        self.engine.loop = asyncio.get_running_loop()
        host = await lock_or_find_host(self.files, self.workspace, attach=self.attach, timeout=ATTACH_TIMEOUT)
        if host is not None:
            await self._attach(host)
            return self
        try:
            unfinished = self.history_log.end_unfinished("the office stopped before this ask ended")
            definitions = await asyncio.to_thread(resolve_definitions, self.workspace, self.agent_choice)
            self.engine.sessions = self.files.load_sessions()
            if self.listen:
                self.socket_server = OfficeSocketServer(self)
                await self.socket_server.start()
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
        self.engine.accepting = True
        if self.socket_server is not None and self.socket_server.directory is not None:
            self.files.record_socket_folder(self.socket_server.directory)  # others may attach from now
        note = f"office started with {len(self.employees)} employees"
        if unfinished:
            note += f"; {len(unfinished)} asks left unfinished by the previous office were marked failed"
        self.history_log.note(note)
        log_office(self, note)
        return self

    def _make_employee(self, definition: AgentDefinition) -> Employee:
        token = secrets.token_hex(16)
        runner = self._make_runner(definition, token, resume=self.engine.sessions.get(definition.name))
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

    def _options_for(self, agent_name: str) -> RunnerOptions:
        agent_tools = self.tools.get(agent_name)
        if agent_tools is None:
            return self.runner_options
        return dataclasses.replace(self.runner_options, tools=agent_tools)

    async def stop(self) -> None:
        """End every ask (queued: cancelled; running: interrupted), stop every CLI, unlock. Idempotent, bounded."""
        if self.status in ("closed", "new"):
            self.status = "closed"
            return
        if self.attachment is not None:  # leave the host office; it goes on serving the others
            await self.attachment.stop()
            self.status = "closed"
            self.listeners.notify("stopped", None)
            return
        self.status = "closing"
        engine = self.engine
        engine.accepting = False
        for ask in engine.unfinished():
            engine.cancel(ask, by=USER, outcome="cancelled", reason="the office stopped")
        pending = [ask.settled() for ask in engine.unfinished()]
        if pending:
            await asyncio.wait(pending, timeout=30.0)
        for ask in engine.unfinished():  # a CLI that ignored everything: settle it anyway
            engine.finish(ask, engine.synthetic(ask, "failed", "the office stopped", "OFFICE_STOPPED"))
        if engine.tasks:  # a CLI start under way ends (it sees its ask ended), bounded
            await asyncio.wait(list(engine.tasks), timeout=10.0)
        for task in list(engine.tasks):
            task.cancel()
        await asyncio.gather(  # after the tasks: a start they left half done is stopped too
            *(employee.runner.stop() for employee in self.employees.values()), return_exceptions=True
        )
        self.history_log.note("office stopped")
        log_office(self, "office stopped")
        self.status = "closed"  # what the boards show (here and the watchers') from the "stopped" event on
        self.listeners.notify("stopped", None)  # before the socket closes: watchers see it end
        await self._release()

    @classmethod
    async def connect(cls, workspace: str | os.PathLike[str] = ".") -> Office:
        """Attach to the office already serving ``workspace`` (never start one): ``OFFICE_UNREACHABLE``
        when none does. ``Office(workspace).start()`` attaches too, or starts one when none serves."""
        resolved = Path(workspace).resolve()
        found = serving_office(resolved)
        if found is None:
            raise OfficeUnreachable(
                f"no office serves {resolved}: start one (await Office(workspace).start(), or elynav office serve)",
                details={"workspace": str(resolved)},
            )
        office = cls(resolved)
        office.engine.loop = asyncio.get_running_loop()
        await office._attach(found)
        return office

    async def _attach(self, found: tuple[Path, str]) -> None:
        """Attach to the office that serves the workspace (``office/attached.py``), as the user."""
        if self.tools:
            raise InvalidInput(
                "tools= are served by the kernel that hosts the office; this one attaches to the office "
                f"already serving {self.workspace} (stop it, or give the tools there)",
                details={"workspace": str(self.workspace)},
            )
        attachment = Attachment(OfficeClient(*found), self.listeners.notify)
        await attachment.start()
        self.attachment = attachment
        self.employees = cast(dict[str, Employee], attachment.employees)  # mirrors: Employee's reading side
        self.status = "open"
        log_office(self, f"attached to the office serving {self.workspace}")

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

    def submit(self, to: str, text: str, **options: Unpack[AskKeywords]) -> Ask:
        """Queue an ask and return its handle at once (``await ask`` for the ``Reply``).

        Options (``AskOptions``): ``sender`` is ``"user"`` (the default) or an employee's name. An ask
        sent in an agent's name while that agent is working belongs to its running ask (``parent``):
        cancelling that one cancels this one, and a wait-for cycle is refused with ``DEADLOCK``.
        ``timeout`` bounds it (seconds; the office's ``ask_timeout`` by default). ``output_schema``
        asks for a structured answer, as ``AgentRunner.send`` does (``reply.data``,
        ``reply.to_frame()``; ``OUTPUT_INVALID`` when the answer does not match; a bad schema is
        ``INVALID_INPUT`` here).
        """
        return self._submit(to, text, AskOptions.of(options))

    def _submit(self, to: str, text: str, options: AskOptions) -> Ask:
        self._require_open()
        self._require_own_loop("submit")
        if self.attachment is not None:
            return self._submit_attached(to, text, options)
        schema = output_schema_of(options.output_schema)
        employee = self.employee(to)
        sender_name = options.sender if options.sender == USER else self.employee(options.sender).name
        checked_text(text, self.max_text_chars)
        bound = checked_timeout(options.timeout, self.ask_timeout)
        parent_ask = self._parent_for(sender_name, options.parent)
        if parent_ask is not None:
            check_depth(parent_ask, self.max_delegation_depth)
        if parent_ask is not None or sender_name == employee.name:  # an agent never waits on itself
            check_no_cycle(sender_name, employee.name, self._waits_for)
        assert self.engine.loop is not None  # the running loop (_require_own_loop)
        ask = Ask(
            self,
            uuid.uuid4().hex[:12],
            sender_name,
            employee.name,
            text,
            parent=parent_ask,
            queued_at=utc_now(),
            deadline=capped_deadline(self.engine.loop.time(), bound, parent_ask),
            output_schema=schema,
        )
        self.engine.queue(ask)
        return ask

    def _submit_attached(self, to: str, text: str, options: AskOptions) -> Ask:
        """An ask sent to the host office as the user (an ``AttachedAsk``: the same reading surface)."""
        assert self.attachment is not None
        if options.sender != USER or options.parent is not None or options.output_schema is not None:
            raise InvalidInput(
                "an office attached to another process's office asks as the user only, without parent "
                "or output_schema (send those from the kernel that hosts it)"
            )
        employee = self.employee(to)
        checked_text(text, self.max_text_chars)
        timeout = checked_timeout(options.timeout, self.ask_timeout)
        return cast(Ask, self.attachment.submit(employee.name, text, timeout))

    async def ask(self, to: str, text: str, **options: Unpack[AskKeywords]) -> Reply:
        """``await office.ask(to, text)``: queue it and wait for its ``Reply`` (interrupting the cell cancels it).

        The options of ``submit`` (``sender``, ``timeout``, ``parent``, ``output_schema``)."""
        return await self._submit(to, text, AskOptions.of(options))

    def try_ask(self, to: str, text: str, **options: Unpack[AskKeywords]) -> Ask:
        """Like ``submit``, but ``AGENT_BUSY`` instead of queueing when the employee is not free."""
        checked = AskOptions.of(options)
        self._require_open()
        employee = self.employee(to)
        if employee.busy or employee.queue_length:
            raise AgentBusy(
                f"{employee.name} is busy (for {employee.caller}, {employee.queue_length} waiting); "
                "use submit() to queue the ask",
                details={
                    "agent": employee.name,
                    "caller": employee.caller,
                    "queue_length": employee.queue_length,
                },
            )
        return self._submit(to, text, checked)

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
            return self._submit(to, text, AskOptions(timeout=timeout, output_schema=output_schema))
        running = self.employee(caller.name).current
        if running is None:
            raise InvalidInput(
                f"{caller.name} is not working on an ask: only a running turn may ask another agent",
                details={"agent": caller.name},
            )
        return self._submit(to, text, AskOptions(caller.name, timeout, running, output_schema))

    def identify(self, holders: Sequence[int], presented_token: str = "") -> Caller:
        """The caller behind the processes holding a connection (``office/peers.py``), or ``CALLER_UNKNOWN``."""
        processes = [process for employee in self.employees.values() if (process := employee.agent_process())]
        tokens = {employee.name: employee.token for employee in self.employees.values()}
        return identify_caller(
            holders, processes, tokens, user_token=self.user_token, presented_token=presented_token
        )

    def _require_open(self) -> None:
        if self.attachment is not None and self.attachment.status != "open":
            raise RunnerClosed(
                f"the office this one attached to is {self.attachment.status}: make a new Office"
            )
        if self.status == "new":
            raise RunnerClosed("the office is not started: await office.start() first")
        if self.status != "open":
            raise RunnerClosed(f"the office is {self.status}: make a new Office")

    def _require_own_loop(self, method: str) -> None:
        """``NO_RUNNING_LOOP`` outside any running loop (terminal IPython runs it only in ``await`` lines),
        ``LOOP_MISMATCH`` on another loop, ``LOOP_ENDED`` once the office's loop is closed."""
        require_loop(
            self.engine.loop,
            call=f"office.{method}()",
            owner="this office",
            remedy="it runs on the office's event loop: call it from a coroutine or a line with `await` "
            "(in terminal IPython: `reply = await office.ask(...)`)",
        )

    def _parent_for(self, sender: str, parent: Ask | str | None) -> Ask | None:
        if parent is None:
            running = self.employees[sender].current if sender != USER else None
            return self._parent_for(sender, running) if running is not None else None
        return checked_parent(parent if isinstance(parent, Ask) else self.get_ask(parent), sender)

    def _waits_for(self, agent: str) -> list[str]:
        """The agents that ``agent``'s running turn waits on (its pending asks)."""
        employee = self.employees.get(agent)
        if employee is None or employee.current is None:
            return []
        return [child.agent for child in employee.current.pending_children()]

    def get_ask(self, ask_id: str) -> Ask:
        """The ask ``ask_id`` (in flight, or among the last ended ones), or ``ASK_NOT_FOUND``."""
        if self.attachment is not None:
            return cast(Ask, self.attachment.get(ask_id))  # in flight only
        return self.engine.get(ask_id)

    def queue_position(self, ask: Ask) -> int:
        """0 while running (or ended), else 1 for the next ask to run."""
        if self.attachment is not None:
            return self.attachment.queue_position(ask.id)
        queue = self.employees[ask.agent].queue
        return queue.index(ask) + 1 if ask in queue else 0

    @property
    def asks(self) -> list[Ask]:
        """The asks not ended yet (running ones first, then by queue order)."""
        if self.attachment is not None:
            return cast(list[Ask], self.attachment.asks)  # the host's, as its last snapshot shows them
        running = [employee.current for employee in self.employees.values() if employee.current is not None]
        queued = [ask for employee in self.employees.values() for ask in employee.queue]
        return running + queued

    # -- cancelling ------------------------------------------------------------------------------------

    def cancel(self, ask_id: str | Ask, *, by: str = USER, reason: str = "") -> Ask:
        """Cancel an ask as ``by`` (the user, or the agent that sent it), with everything it waits on.

        ``NOT_ALLOWED`` for anyone else (nothing changes); idempotent; returns the ask (``await`` it).
        An attached office cancels as the user (the host checks the right, as for any caller).
        """
        if self.attachment is not None:
            return self._cancel_attached(ask_id, by)
        ask = ask_id if isinstance(ask_id, Ask) else self.get_ask(ask_id)
        caller = by if by == USER else self.employee(by).name
        check_cancel_right(ask_id=ask.id, ask_sender=ask.sender, agent=ask.agent, caller=caller)
        self.engine.cancel(ask, by=caller, outcome="cancelled", reason=reason or f"cancelled by {caller}")
        return ask

    def _cancel_attached(self, ask_id: str | Ask, by: str) -> Ask:
        assert self.attachment is not None
        if by != USER:
            raise InvalidInput("an attached office cancels as the user only (by='user')")
        if isinstance(ask_id, AttachedAsk):
            return cast(Ask, ask_id.cancel())
        identifier = ask_id if isinstance(ask_id, str) else ask_id.id
        found: AskMirror | AttachedAsk = self.attachment.get(identifier)
        if isinstance(found, AttachedAsk):
            return cast(Ask, found.cancel())
        self.attachment.cancel(identifier)
        return cast(Ask, found)

    # -- what it shows ---------------------------------------------------------------------------------

    def history(self, agent: str | None = None) -> pandas.DataFrame:
        """The unified history (one row per ask, every conversation); ``agent`` keeps its asks both ways."""
        name = self.employee(agent).name if agent is not None and self.employees else agent
        return history_of(self.history_log, name)

    def to_frame(self) -> pandas.DataFrame:
        """One row per employee: status, caller, queue length, running since, session."""
        return employees_frame(self.employees.values())

    def board(self) -> Any:
        """The live board widget (employees, queues, cancel buttons, live output, history)."""
        importlib.import_module("elynav_nb.widgets")  # registers the office board
        view = view_for(self)
        if view is None:
            raise InvalidInput("no board view is registered (is ipywidgets installed?)")
        return view

    def add_listener(self, listener: OfficeListener) -> None:
        """Call ``listener(event, ask)`` on every change (the board subscribes here)."""
        self.listeners.add(listener)

    def remove_listener(self, listener: OfficeListener) -> None:
        self.listeners.remove(listener)

    def __repr__(self) -> str:
        return office_text(self.status, self.workspace, self.employees, attached=self.attachment is not None)

    def _repr_html_(self) -> str:
        return office_html(self.status, self.workspace, self.employees)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)
