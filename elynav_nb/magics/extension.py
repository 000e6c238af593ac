"""``%load_ext elynav_nb``: talk to agents from cells, the way jupyter-ai users do.

Where it sits: the notebook layer, beside ``elynav_nb.widgets`` (it uses the agents and the office;
no capability imports it). ``load_ipython_extension`` registers ``ElynavMagics`` and the cell
rewriter of ``cells.py``, so an ``%%agent`` cell becomes one top-level ``await``: the turn streams in
the cell's output with its Cancel button, the kernel's loop keeps running, and the notebook's stop
button (a kernel interrupt) cancels the turn or the ask, bounded, as the Cancel button does.

Magics (their command lines and help are the parsers of ``parsers.py``: ``%agent --help``)::

    %%agent NAME [--cli CLI] [-o VAR] [--timeout S] [--schema VAR]    the cell body is the message
    %agent NAME message...                                           the same on one line
    %%ask NAME [--office VAR] [-o VAR] [--timeout S] [--schema VAR]  through a running office
    %office  %agents  %elynav_history                                 the board, the agents, the history
    %elynav_stop                                                       stop the runners the magics started
    %elynav help | list | error                    every magic's help, the agent CLIs, the last error

``{field}`` in a message is filled from the kernel's namespace (``interpolation.py``: ``{name}``,
``{In[3]}``, ``{Out[2]}``, ``{_}``; ``{{`` for a brace; no ``_`` names, bounded, redacted). The ``TurnResult`` (or the ``Reply``) goes
to ``VAR`` and to ``_``. ``--schema VAR`` names a schema in the namespace (a JSON Schema dict, a
pydantic model, a ``TypedDict``, ``list[Model]``): the answer is structured, ``result.data`` holds it
and ``result.to_frame()`` its rows (``OUTPUT_INVALID`` when it does not match). One runner per agent
and CLI per kernel, kept across cells (the conversation goes on). Which CLI is the runner's plan
(``plan_runner``: ``--cli``, else the ``cli`` trait, else the agent's own, else the default one); ``--cli``
takes the protocol registry's names, and nothing here branches on a CLI's name. Defaults are traits:
``%config ElynavMagics.workspace = "ws"`` (also ``executable``, ``cli``, ``cli_mode``, ``timeout``),
like jupyter-ai's ``%config AiMagics``.

Where the answer shows: in a notebook kernel, the turn's live view (its saved text and HTML updated
at the end); elsewhere (terminal IPython), the answer streams as the cell's printed output.

A magic that fails fails its cell, as one line ``CODE: message`` (``ElynavError._render_traceback_``),
so "Run All", nbval and papermill stop there: bad input before anything runs, and a turn or an ask
that ended ``failed``, ``error``, ``timeout`` or ``limit`` (a cancelled one does not: someone chose
it). ``%elynav error`` shows the last such error again, with the line that raised it.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.display import display
from traitlets import Float, Unicode

from elynav_nb._display import in_notebook_kernel
from elynav_nb.agents import (
    AgentDefinition,
    AgentRunner,
    AgentStarted,
    TurnResult,
    builtin_agents,
    find_agent_file,
    load_agents,
)
from elynav_nb.agents.output_schema import output_schema_of
from elynav_nb.agents.protocols.registry import DEFAULT_CLI, plan_runner
from elynav_nb.agents.transcript_display import event_text
from elynav_nb.errors import AgentBusy, AgentNotFound, ElynavError, InvalidInput
from elynav_nb.magics.catalogue import cli_catalogue
from elynav_nb.magics.cells import rewrite_cell
from elynav_nb.magics.interpolation import interpolate
from elynav_nb.magics.parsers import HelpShown, magics_help, parser_for

__all__ = ["ElynavMagics", "load_ipython_extension", "unload_ipython_extension"]

_PASSING_OUTCOMES = ("completed", "done", "cancelled")  # a cancel was chosen: the cell does not fail


@magics_class
class ElynavMagics(Magics):
    """The elynav magics (see the module docstring). Configure with ``%config ElynavMagics.<trait>``."""

    workspace = Unicode(".", help="the folder the agents work in (their files in .claude/agents)").tag(
        config=True
    )
    executable = Unicode(
        "", help="the CLI command ('standin' for claude's stand-in; '' for the real one)"
    ).tag(config=True)
    cli = Unicode(
        "", help=f"the CLI when a cell names none ('' for the agent's own, else {DEFAULT_CLI})"
    ).tag(config=True)
    cli_mode = Unicode("", help="the CLI's mode ('' for its default: codex app-server)").tag(config=True)
    timeout = Float(600.0, help="seconds a turn or an ask may take from a cell").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.runners: dict[tuple[str, str], AgentRunner] = {}
        self.last_error: ElynavError | None = None  # what %elynav error shows
        self.last_error_line = ""

    # -- the magics IPython sees (a cell rewritten by cells.py awaits run_magic_async instead) -------

    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> Any:
        """``%%agent NAME [--cli C] [-o VAR] [--timeout S] [--schema VAR]``: send the cell to NAME (see ``ElynavMagics``)."""
        return self._without_rewrite("agent", line, cell)

    @line_cell_magic
    def ask(self, line: str, cell: str | None = None) -> Any:
        """``%%ask NAME [--office VAR] [-o VAR] [--timeout S] [--schema VAR]``: ask NAME through the running office."""
        return self._without_rewrite("ask", line, cell)

    def _without_rewrite(self, name: str, line: str, cell: str | None) -> Any:
        """Called directly (not through a rewritten cell): run on the loop if one runs here, else block."""
        coroutine = self.run_magic_async(name, line, cell)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            from elynav_nb._sync import private_loop, run_sync

            return run_sync(coroutine, owner_loop=private_loop())
        return loop.create_task(coroutine)  # awaitable; the live view is already displayed

    @line_magic
    def office(self, line: str) -> Any:
        """``%office [VAR]``: the board of the running office."""
        return self._recorded(f"%office {line}", lambda: self._find_office(line.strip() or None))

    @line_magic
    def agents(self, line: str) -> Any:
        """``%agents``: the agents of the workspace, their CLI and their state in this kernel."""
        return self._recorded(f"%agents {line}", self._agents_frame)

    def _agents_frame(self) -> Any:
        import pandas

        office = self._find_office(None, required=False)
        rows = []
        for definition in self._definitions().values():
            employee = office.employees.get(definition.name) if office is not None else None
            runners = [runner for (name, _), runner in self.runners.items() if name == definition.name]
            state = employee.status if employee is not None else (runners[0].status if runners else "")
            rows.append(
                {
                    "agent": definition.name,
                    "cli": self._cli_of(definition),
                    "description": definition.description,
                    "state": state,
                    "turns": sum(len(runner.history) for runner in runners),
                }
            )
        return pandas.DataFrame(rows, columns=["agent", "cli", "description", "state", "turns"])

    def _cli_of(self, definition: AgentDefinition) -> str:
        """The CLI a cell naming this agent runs (its plan's); an unknown one as the agent file names it."""
        try:
            return plan_runner(definition, Path(self.workspace), cli=self.cli or None, cli_mode=None).cli
        except ElynavError:
            return definition.cli or ""

    @line_magic
    def elynav_history(self, line: str) -> Any:
        """``%elynav_history``: the office's unified history, else this kernel's turns, one row each."""
        return self._recorded(f"%elynav_history {line}", lambda: self._history(line))

    def _history(self, line: str) -> Any:
        import pandas

        office = self._find_office(None, required=False)
        if office is not None:
            return office.history(line.strip() or None)
        frames = [runner.to_frame() for runner in self.runners.values()]
        return pandas.concat(frames, ignore_index=True) if frames else pandas.DataFrame()

    @line_magic
    def elynav(self, line: str) -> Any:
        """``%elynav help | list | error``: every magic's help, the agent CLIs and models, the last error."""
        try:
            topic = parser_for("elynav", cell=False).parse_args(shlex.split(line)).topic
        except HelpShown:
            return None
        except ElynavError as error:
            self._remember(error, f"%elynav {line}")
            raise
        if topic == "list":
            return cli_catalogue()
        if topic == "error":
            print(self._last_error_text())
            return None
        print(magics_help())
        return None

    def _last_error_text(self) -> str:
        error = self.last_error
        if error is None:
            return "no magic failed in this kernel yet"
        lines = [f"{error.code}: {error}", f"in: {self.last_error_line.strip()}"]
        lines += [f"{key}: {value}" for key, value in error.details.items()]
        return "\n".join(lines)

    def _recorded(self, line: str, function: Any) -> Any:
        try:
            return function()
        except ElynavError as error:
            self._remember(error, line)
            raise

    def _remember(self, error: ElynavError, line: str) -> None:
        self.last_error = error
        self.last_error_line = line

    @line_magic
    def elynav_stop(self, line: str) -> Any:
        """``%elynav_stop``: stop every runner the magics started (bounded; the next cell starts anew)."""
        return self._without_rewrite("stop", line, None)

    # -- what a cell runs ---------------------------------------------------------------------------

    async def run_magic_async(self, name: str, line: str, body: str | None) -> None:
        """Run ``%%agent`` or ``%%ask`` for a cell; a typed error fails the cell as one line ``CODE: message``."""
        try:
            if name == "agent":
                await self._agent(line, body)
            elif name == "ask":
                await self._ask(line, body)
            else:  # elynav_stop
                await self.stop_all()
        except HelpShown:
            return
        except ElynavError as error:
            prefix = "%%" if body is not None else "%"
            self._remember(error, f"{prefix}{name} {line}")
            raise

    async def _agent(self, line: str, body: str | None) -> None:
        arguments = parser_for("agent", cell=body is not None).parse_args(shlex.split(line))
        text = self._message(getattr(arguments, "message", ()), body)
        schema = self._schema(arguments.schema_variable)
        runner = self._runner(arguments.name, arguments.cli)
        if runner.busy:
            raise AgentBusy(
                f"{runner.agent_name} is in a turn started by another cell; await it or cancel it"
            )
        turn = runner.send(text, output_schema=schema)
        streaming = None
        if in_notebook_kernel():
            display(turn)  # type: ignore[no-untyped-call]  # the live view; its saved form updated at the end
        else:  # a terminal: the answer is the cell's printed output, as it streams
            streaming = asyncio.ensure_future(_print_events(turn))
        timeout = arguments.timeout or self.timeout
        try:
            result: TurnResult = await asyncio.wait_for(asyncio.shield(turn.settled()), timeout)
        except TimeoutError:
            result = await turn.cancel(f"the cell's bound of {timeout:g} s was reached", outcome="timeout")
        except BaseException:  # a kernel interrupt (KeyboardInterrupt or CancelledError): a bounded cancel
            cancelled = turn.cancel("the cell was interrupted")
            # the cell ends once the turn has (its view then says cancelled), within the cancel's bound
            await asyncio.wait([cancelled], timeout=runner.interrupt_timeout + 3.0)
            raise
        finally:
            if streaming is not None:
                await asyncio.wait([streaming], timeout=1.0)
        self._store(arguments.variable, result)
        if result.outcome not in _PASSING_OUTCOMES:
            result.raise_for_outcome()

    async def _ask(self, line: str, body: str | None) -> None:
        arguments = parser_for("ask", cell=body is not None).parse_args(shlex.split(line))
        text = self._message(getattr(arguments, "message", ()), body)
        office = self._find_office(arguments.office_variable)
        assert office is not None
        schema = self._schema(arguments.schema_variable)
        ask = office.submit(arguments.name, text, timeout=arguments.timeout, output_schema=schema)
        if in_notebook_kernel():
            display(ask)  # type: ignore[no-untyped-call]
        try:
            reply = await ask
        except BaseException:
            office.cancel(ask, reason="the cell was interrupted")
            raise
        if not in_notebook_kernel():
            print(reply.text)
        self._store(arguments.variable, reply)
        if reply.outcome not in _PASSING_OUTCOMES:
            reply.raise_for_outcome()

    # -- helpers ------------------------------------------------------------------------------------

    def _message(self, words: Sequence[str], body: str | None) -> str:
        raw = body if body is not None else " ".join(words)
        text = interpolate(raw, self.shell.user_ns if self.shell is not None else {}).strip()
        if not text:
            raise InvalidInput("the message is empty: write it in the cell below %%agent NAME")
        return text

    def _schema(self, variable: str | None) -> Any:
        """The schema ``--schema VAR`` names in the user namespace (None without the option)."""
        if variable is None:
            return None
        namespace = self.shell.user_ns if self.shell is not None else {}
        if not variable.isidentifier() or variable not in namespace:
            raise InvalidInput(
                f"--schema takes the name of a variable holding a schema; {variable!r} is not defined here"
            )
        schema = namespace[variable]
        output_schema_of(schema)  # a bad schema is INVALID_INPUT before anything is sent
        return schema

    def _store(self, variable: str | None, value: Any) -> None:
        if self.shell is None:
            return
        if variable:
            if not variable.isidentifier():
                raise InvalidInput(f"-o takes a variable name, not {variable!r}")
            self.shell.user_ns[variable] = value
        self.shell.user_ns["_"] = value

    def _definitions(self) -> dict[str, AgentDefinition]:
        folder = Path(self.workspace) / ".claude" / "agents"
        found = load_agents(folder) if folder.is_dir() else {}
        return {**builtin_agents(), **found}

    def _runner(self, name: str, cli: str | None) -> AgentRunner:
        definitions = self._definitions()
        definition = definitions.get(name) or definitions.get(f"elynav-{name}")
        if definition is None:
            raise AgentNotFound(
                f"no agent {name!r} in {Path(self.workspace).resolve() / '.claude' / 'agents'} nor among the "
                f"built-in agents; choose one of: {', '.join(sorted(definitions))}",
                details={"agent": name},
            )
        plan = plan_runner(
            definition,
            Path(self.workspace).resolve(),
            cli=cli or self.cli or None,
            cli_mode=self.cli_mode or None,
        )
        key = (definition.name, plan.cli)
        runner = self.runners.get(key)
        if plan.protocol.agent_file_in_workspace and find_agent_file(self.workspace, definition.name) is None:
            folder = Path(self.workspace).resolve() / ".claude" / "agents"
            print(f"{definition.name}: a built-in agent, written to {folder} where {plan.cli} reads agents")
        if runner is None or runner.status == "closed":
            runner = AgentRunner(
                definition,
                self.workspace,
                cli=plan.cli,
                cli_mode=plan.mode,
                executable=self.executable or None,
            )
            self.runners[key] = runner
        return runner

    def _find_office(self, variable: str | None, *, required: bool = True) -> Any:
        from elynav_nb.office import Office

        namespace = self.shell.user_ns if self.shell is not None else {}
        if variable is not None:
            office = namespace.get(variable)
            if not isinstance(office, Office):
                raise InvalidInput(f"{variable} is not an Office in this kernel")
            return office
        offices = [
            value
            for key, value in namespace.items()
            if isinstance(value, Office) and not key.startswith("_") and value.employees
        ]
        unique = list({id(office): office for office in offices}.values())
        if len(unique) == 1:
            return unique[0]
        if not required:
            return None
        if not unique:
            raise InvalidInput("no running office in this kernel: office = await Office(workspace).start()")
        raise InvalidInput("several offices run in this kernel: name one with --office VAR")

    async def stop_all(self) -> None:
        """Stop every runner the magics started (bounded)."""
        await asyncio.gather(*(runner.stop() for runner in self.runners.values()), return_exceptions=True)


async def _print_events(turn: Any) -> None:
    """A turn as terminal text while it streams: the answer as it comes, a line per tool call."""
    tool_names: dict[str, str] = {}
    async for event in turn:
        if isinstance(event, AgentStarted):
            continue  # the session and model: in the result, not in the answer
        piece = event_text(event, tool_names)
        if piece:
            sys.stdout.write(piece)
            sys.stdout.flush()
    sys.stdout.write("\n")
    sys.stdout.flush()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext elynav_nb``: the magics, their cell rewriter and their ``%config`` traits."""
    if "ElynavMagics" in ipython.magics_manager.registry:
        return
    magics = ElynavMagics(ipython)
    ipython.register_magics(magics)
    ipython.configurables.append(magics)
    ipython.input_transformers_cleanup.append(rewrite_cell)


def unload_ipython_extension(ipython: Any) -> None:
    if rewrite_cell in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(rewrite_cell)
    ipython.magics_manager.registry.pop("ElynavMagics", None)
