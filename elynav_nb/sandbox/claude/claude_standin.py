"""``elynav-claude-standin``: an executable that behaves on the wire like ``claude --print`` in stream-json mode.

It is **not Claude**: replies are deterministic, scripted by ``@standin`` directive lines (see
``directives``), the model is ``elynav-standin``, ``system/init`` carries ``"elynav_standin": true``
and a one-line note goes to stderr at start-up. Everything else imitates the real CLI (2.1.332 by default,
2.1.197 with ``ELYNAV_STANDIN_VERSION=2.1.197``): flags and their start-up errors, exit codes, message
order, key order, the control protocol, queued messages, interrupts, signals and sessions.

Where it sits: ``elynav_nb/sandbox/claude``; imported by nothing in the library. The agent runner's tests,
the notebooks and the README demo spawn it instead of ``claude``.

How data flows: argv -> ``args`` -> start-up checks (in the real CLI's order) -> ``Conversation``:
a reader thread turns stdin lines into loop events; the dispatcher answers control requests at once
(even mid-turn), queues user messages and hands permission answers to the waiting turn; the worker plays
one ``TurnRunner`` at a time; every stdout line is written whole and flushed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.args import HELP_TEXT, FlagError, parse_arguments
from elynav_nb.sandbox.claude.mcp_servers import McpHub
from elynav_nb.sandbox.claude.sdk_mcp import ControlChannel
from elynav_nb.sandbox.claude.sessions import SessionStore, standin_home
from elynav_nb.sandbox.claude.start import (
    PERMISSION_MODES,
    ResumeFailure,
    StartPlan,
    base_tools,
    imitated_style,
    plan_start,
)
from elynav_nb.sandbox.claude.structured import STRUCTURED_OUTPUT_TOOL
from elynav_nb.sandbox.claude.tools import BashOutcome, bash_result_content
from elynav_nb.sandbox.claude.turns import SessionState, TurnRunner

__all__ = ["main"]

EXIT_SIGTERM = 143
STDIN_CHUNK_BYTES = 1 << 16


class StdoutWriter:
    """Writes whole lines to stdout and flushes each one; ``--output-format text|json`` keep only the result."""

    def __init__(self, output_format: str) -> None:
        self.output_format = output_format
        self.stream = sys.stdout.buffer
        self.last_result: dict[str, Any] | None = None

    def write(self, message: dict[str, Any]) -> None:
        if message.get("type") == "result":
            self.last_result = message
        if self.output_format != "stream-json":
            return
        self.stream.write(wire.encode_line(message))
        self.stream.flush()

    def write_bytes(self, data: bytes) -> None:
        if self.output_format != "stream-json":
            return
        self.stream.write(data)
        self.stream.flush()

    def finish_plain_output(self) -> None:
        """For ``text`` and ``json`` output: print the last result (its text, or the whole object)."""
        if self.output_format == "stream-json" or self.last_result is None:
            return
        if self.output_format == "json":
            self.stream.write(wire.encode_line(self.last_result))
        else:
            text = self.last_result.get("result")
            if text is None:
                text = "\n".join(self.last_result.get("errors") or [])
            self.stream.write((str(text) + "\n").encode("utf-8"))
        self.stream.flush()


def _invalid_line_message(style: wire.WireStyle, line: str) -> str:
    """The stderr line of the real CLI for a stdin line that is not JSON."""
    if style.modern:
        match = re.search(r'"type"\s*:\s*"([^"]*)"', line)
        kind = match.group(1) if match else "unknown"
        return f"Error parsing streaming input line (type={kind}, {len(line)} chars): SyntaxError"
    try:
        json.loads(line)
    except ValueError as error:
        return f"Error parsing streaming input line: {line}: SyntaxError: JSON Parse error: {error}"
    return f"Error parsing streaming input line: {line}"


class Conversation:
    """The stream-json loop: stdin reader, control dispatcher, turn worker, signal handlers."""

    def __init__(self, plan: StartPlan, writer: StdoutWriter) -> None:
        self.plan = plan
        self.style = plan.style
        self.writer = writer
        self.inbound: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.queued: deque[dict[str, Any]] = deque()
        self.queue_changed = asyncio.Event()
        self.stdin_closed = False
        self.stop_after_turn = False
        self.current_runner: TurnRunner | None = None
        self.current_task: asyncio.Task[None] | None = None
        self.forced_exit_code: int | None = None
        self._initializing: asyncio.Task[None] | None = None
        options = plan.options
        cwd_text = str(plan.cwd)
        home = standin_home()
        store = SessionStore(home, plan.session_id, cwd_text, persist=not options.no_session_persistence)
        store.start(plan.earlier)
        tools, restricted = base_tools(plan)
        permission_mode = options.permission_mode or "default"
        if options.dangerously_skip_permissions:
            permission_mode = "bypassPermissions"
        slug = re.sub(r"[^A-Za-z0-9]", "-", cwd_text)
        self.hub = McpHub(plan.mcp_configs, cwd_text)
        self.session = SessionState(
            style=plan.style,
            session_id=plan.session_id,
            cwd=cwd_text,
            model=_model_name(options.model),
            permission_mode=permission_mode,
            base_tools=tools,
            mcp_tools_need_listing=restricted,
            agents=plan.catalogue.names(),
            memory_directory=str(home / "projects" / slug / "memory") + "/",
            additional_directories=[str(Path(directory).resolve()) for directory in options.add_dirs],
            include_partial_messages=options.include_partial_messages,
            replay_user_messages=options.replay_user_messages,
            forward_subagent_text=options.forward_subagent_text,
            prompt_over_stdio=options.permission_prompt_tool == "stdio"
            and options.permission_prompts != "none",
            allowed_rules=list(options.allowed_tools),
            disallowed_rules=list(options.disallowed_tools),
            max_turns=options.max_turns,
            max_budget_usd=_budget(options.max_budget_usd),
            hub=self.hub,
            store=store,
            emit=writer.write,
            emit_bytes=writer.write_bytes,
            queued_count=lambda: len(self.queued),
            json_schema=plan.json_schema,
            agent_tools_listed=plan.agent_tools is not None,
        )

    # ------------------------------------------------------------------ process entry points

    async def run_stream(self) -> int:
        loop = asyncio.get_running_loop()
        self.hub.start()
        self._install_signal_handlers(loop)
        reader = threading.Thread(target=self._read_stdin, args=(loop,), name="standin-stdin", daemon=True)
        reader.start()
        dispatcher = asyncio.create_task(self._dispatch())
        try:
            await self._work()
        finally:
            dispatcher.cancel()
            await self.hub.close()
        return self._exit_code()

    async def run_single(self, prompt: str) -> int:
        loop = asyncio.get_running_loop()
        self.hub.start()
        self._install_signal_handlers(loop)
        self.stdin_closed = True
        try:
            await self._play({"role": "user", "content": prompt})
        finally:
            await self.hub.close()
        self.writer.finish_plain_output()
        return self._exit_code()

    def _exit_code(self) -> int:
        if self.forced_exit_code is not None:
            return self.forced_exit_code
        return 1 if self.session.last_result_is_error else 0

    # ------------------------------------------------------------------ stdin

    def _read_stdin(self, loop: asyncio.AbstractEventLoop) -> None:
        """Raw reads of fd 0 split on newlines (no buffered-reader lock, so interpreter exit never blocks on it)."""
        pending = b""
        try:
            while True:
                chunk = os.read(0, STDIN_CHUNK_BYTES)
                if not chunk:
                    break
                pending += chunk
                while (newline_at := pending.find(b"\n")) >= 0:
                    line, pending = pending[: newline_at + 1], pending[newline_at + 1 :]
                    loop.call_soon_threadsafe(self.inbound.put_nowait, line)
            if pending:
                loop.call_soon_threadsafe(self.inbound.put_nowait, pending)
            loop.call_soon_threadsafe(self.inbound.put_nowait, None)
        except (RuntimeError, ValueError, OSError):
            return  # the loop is closed: the process is exiting

    async def _dispatch(self) -> None:
        while True:
            raw = await self.inbound.get()
            if raw is None:
                self.stdin_closed = True
                self.queue_changed.set()
                return
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not text.strip():
                continue
            try:
                message = json.loads(text)
            except ValueError:
                sys.stdout.buffer.flush()
                sys.stderr.write(_invalid_line_message(self.style, text) + "\n")
                sys.stderr.flush()
                os._exit(1)
            if not isinstance(message, dict):
                continue
            kind = message.get("type")
            if kind == "user":
                self._accept_user_message(message)
            elif kind == "control_request" and _subtype_of(message) == "initialize":
                # answered in a task: the host's SDK MCP servers answer their handshake through this loop
                self._initializing = asyncio.create_task(self._answer_control(message))
            elif kind == "control_request":
                await self._answer_control(message)
            elif kind == "control_response":
                self._deliver_permission_answer(message)

    def _accept_user_message(self, message: dict[str, Any]) -> None:
        inner = message.get("message")
        if not isinstance(inner, dict):
            inner = {"role": "user", "content": ""}
        if message.get("shouldQuery") is False:
            self.session.store.append("user", str(inner.get("content", "")))
            return
        entry = dict(inner)
        entry["__uuid"] = message.get("uuid") or str(uuid.uuid4())
        self.queued.append(entry)
        self.queue_changed.set()

    # ------------------------------------------------------------------ the worker

    async def _work(self) -> None:
        while True:
            if self.stop_after_turn:
                return
            if self.queued:
                user_message = self.queued.popleft()
                user_message.pop("__uuid", None)
                await self._play(user_message)
                continue
            if self.stdin_closed:
                return
            self.queue_changed.clear()
            await self.queue_changed.wait()

    async def _play(self, user_message: dict[str, Any]) -> None:
        runner = TurnRunner(self.session, user_message)
        self.current_runner = runner
        self.current_task = asyncio.create_task(runner.run())
        try:
            await self.current_task
        finally:
            self.current_runner = None
            self.current_task = None

    def _interrupt_current_turn(self, *, cancel_prompt: bool) -> bool:
        """Cancel the running turn; True when there was one. A pending prompt gets its cancel request first."""
        runner = self.current_runner
        task = self.current_task
        if runner is None or task is None or task.done():
            return False
        pending = runner.state.pending_permission_id or runner.state.pending_hook_id
        if cancel_prompt and pending is not None:
            self.writer.write(wire.build_control_cancel_request(pending))
        runner.mark_interrupted()
        task.cancel()
        return True

    # ------------------------------------------------------------------ control requests

    def _take_initialize_agents(self, agents: Any) -> None:
        """``initialize``'s ``agents`` win over the agent files (as ``--agents`` does). The stand-in takes
        one thing from them: ``StructuredOutput`` listed in the running ``--agent``'s tools."""
        name = self.plan.options.agent
        entry = agents.get(name) if isinstance(agents, dict) and name else None
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(tools, list) and STRUCTURED_OUTPUT_TOOL in tools:
            if STRUCTURED_OUTPUT_TOOL not in self.session.base_tools:
                self.session.base_tools.append(STRUCTURED_OUTPUT_TOOL)

    async def _answer_control(self, message: dict[str, Any]) -> None:
        request_id = str(message.get("request_id", ""))
        request = message.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        session = self.session
        if not isinstance(request, dict) or not isinstance(subtype, str):
            self.writer.write(
                wire.build_control_error(self.style, request_id, "Invalid control request", "invalid_request")
            )
            return
        if subtype == "initialize":
            self._take_initialize_agents(request.get("agents"))
            hooks = request.get("hooks")
            session.hooks = dict(hooks) if isinstance(hooks, dict) else {}
            self.hub.start_sdk_servers(
                ControlChannel(emit=self.writer.write, pending=session.pending_permissions)
            )
            await self.hub.wait_ready()
            payload = wire.build_initialize_response(
                self.style,
                agents=self.plan.catalogue.describe(),
                model=session.model,
                pid=os.getpid(),
                permission_mode=session.reported_permission_mode(),
                output_styles_directory=str(standin_home() / "output-styles"),
            )
            self.writer.write(wire.build_initialize_control_response(self.style, request_id, payload))
        elif subtype == "interrupt":
            runner = self.current_runner
            if runner is not None and runner.state.pending_permission_id is not None:
                self.writer.write(wire.build_control_cancel_request(runner.state.pending_permission_id))
            if runner is not None and runner.state.pending_hook_id is not None:
                self.writer.write(wire.build_control_cancel_request(runner.state.pending_hook_id))
            cancelled: list[str] = []
            if request.get("cancel_queued"):
                for queued in self.queued:
                    cancelled.append(str(queued.get("__uuid")))
                self.queued.clear()
            still_queued = [str(queued.get("__uuid")) for queued in self.queued]
            response: dict[str, Any] | None = None
            if self.style.modern:
                response = {"still_queued": still_queued}
                if request.get("cancel_queued"):
                    response["cancelled"] = cancelled
            self.writer.write(wire.build_control_success(request_id, response))
            self._interrupt_current_turn(cancel_prompt=False)
            await asyncio.sleep(0)
        elif subtype == "set_permission_mode":
            mode = request.get("mode")
            if mode not in PERMISSION_MODES:
                self.writer.write(
                    wire.build_control_error(self.style, request_id, f"Invalid permission mode: {mode}")
                )
                return
            session.permission_mode = str(mode)
            self.writer.write(
                wire.build_control_success(request_id, {"mode": session.reported_permission_mode()})
            )
            self.writer.write(
                wire.build_permission_mode_status(session.session_id, session.reported_permission_mode())
            )
        elif subtype == "set_model":
            requested = request.get("model")
            session.model = _model_name(requested if isinstance(requested, str) else None)
            if self.style.modern:
                label = requested if isinstance(requested, str) and requested else "default"
                replay_text = (
                    f"<local-command-stdout>Set model to `{label} ({session.model})`</local-command-stdout>"
                )
                self.writer.write(
                    wire.build_replay(session.session_id, {"role": "user", "content": replay_text})
                )
                self.writer.write(wire.build_control_success(request_id, {"model": session.model}))
            else:
                self.writer.write(wire.build_control_success(request_id))
        elif subtype == "mcp_status":
            await self.hub.wait_ready()
            entries: list[dict[str, Any]] = []
            for state in self.hub.states:
                tools = None
                if state.status == "connected":
                    tools = [{"name": name, "annotations": {}} for name in state.tool_names]
                entries.append(
                    wire.build_mcp_status_entry(
                        self.style,
                        name=state.config.name,
                        status=state.status,
                        config=state.config.public_config(),
                        error=state.error,
                        server_info=state.server_info,
                        tools=tools,
                    )
                )
            self.writer.write(wire.build_control_success(request_id, {"mcpServers": entries}))
        else:
            self.writer.write(
                wire.build_control_error(
                    self.style,
                    request_id,
                    f"Unsupported control request subtype: {subtype}",
                    "unsupported_request",
                )
            )

    def _deliver_permission_answer(self, message: dict[str, Any]) -> None:
        response = message.get("response")
        if not isinstance(response, dict):
            return
        request_id = str(response.get("request_id", ""))
        waiting = self.session.pending_permissions.get(request_id)
        if waiting is None or waiting.done():
            return
        if response.get("subtype") == "success" and isinstance(response.get("response"), dict):
            waiting.set_result(response["response"])
        else:
            waiting.set_result(
                {
                    "behavior": "deny",
                    "message": str(response.get("error") or "Permission request failed"),
                    "control_error": True,
                }
            )

    # ------------------------------------------------------------------ signals

    def _install_signal_handlers(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)

    def _on_sigint(self) -> None:
        """Abort the running turn like an interrupt (its ``result`` is written), then exit 0."""
        self.stop_after_turn = True
        self.forced_exit_code = 0
        if not self._interrupt_current_turn(cancel_prompt=True):
            self.queue_changed.set()
            self._exit_now(0)

    def _on_sigterm(self) -> None:
        """Exit 143 at once, no ``result``. 2.1.197 leaves the Bash tool running; 2.1.332 kills it first."""
        runner = self.current_runner
        if (
            self.style.modern
            and runner is not None
            and runner.state.bash is not None
            and runner.state.tool_running
        ):
            runner.state.bash.kill_group()
            content, _, structured = bash_result_content(BashOutcome("", 137))
            self.writer.write(
                wire.build_tool_result(
                    self.style,
                    self.session.session_id,
                    runner.state.tool_use_id or "",
                    content,
                    is_error=True,
                    tool_use_result=structured,
                    result_meta={
                        "permission_decision": {
                            "decision": "accept",
                            "source": "config",
                            "reason_type": "mode",
                        }
                    },
                )
            )
        self._exit_now(EXIT_SIGTERM)

    def _exit_now(self, code: int) -> None:
        try:
            sys.stdout.buffer.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _budget(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _subtype_of(message: dict[str, Any]) -> object:
    request = message.get("request")
    return request.get("subtype") if isinstance(request, dict) else None


def _model_name(requested: str | None) -> str:
    """Always the stand-in: ``elynav-standin``, or ``elynav-standin:<alias>`` once a model was asked for."""
    if not requested or requested == "default":
        return wire.MODEL_NAME
    return f"{wire.MODEL_NAME}:{requested}"


def _write_resume_failure(style: wire.WireStyle, failure: ResumeFailure) -> None:
    sys.stdout.buffer.write(
        wire.encode_line(wire.build_resume_failure_result(style, failure.session_id, failure.message))
    )
    sys.stdout.buffer.flush()
    sys.stderr.write(failure.stderr_line + "\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    """Run the stand-in; returns the exit status (the console script passes it to ``sys.exit``)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    style = imitated_style()
    try:
        options = parse_arguments(arguments, modern=style.modern)
    except FlagError as error:
        sys.stderr.write(error.stderr_line + "\n")
        return error.exit_code
    if options.version:
        sys.stdout.write(f"{style.version} (Claude Code)\n")
        return 0
    if options.help:
        sys.stdout.write(HELP_TEXT)
        return 0
    try:
        plan = plan_start(options, style)
    except FlagError as error:
        sys.stderr.write(error.stderr_line + "\n")
        return error.exit_code
    except ResumeFailure as failure:
        _write_resume_failure(style, failure)
        return 1
    sys.stderr.write(
        f"elynav stand-in: not Claude; a local stand-in imitating claude {style.version} on the stream-json wire "
        "(deterministic replies, no account, no network)\n"
    )
    sys.stderr.flush()
    writer = StdoutWriter(options.output_format)
    conversation = Conversation(plan, writer)
    if options.input_format == "stream-json":
        return asyncio.run(conversation.run_stream())
    prompt = options.prompt if options.prompt is not None else sys.stdin.read()
    return asyncio.run(conversation.run_single(prompt))


if __name__ == "__main__":
    sys.exit(main())
