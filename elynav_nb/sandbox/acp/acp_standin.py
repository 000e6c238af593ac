"""``elynav-acp-standin``: a real Agent Client Protocol (v1) agent process that is **not a model**.

It answers ACP over JSON-RPC 2.0 lines on stdin/stdout, deterministically: replies are scripted by
``@standin`` directive lines in the prompt (``acp_directives``), and faults can be injected, both by
directive (malformed lines, unknown updates and methods, hangs, crashes, errors) and at start-up by
``ELYNAV_ACP_STANDIN_FAULT``: ``no-initialize`` (never answers initialize), ``no-load-session``
(advertises ``loadSession: false`` and answers ``session/load`` with -32601), ``exit-at-start`` (exits 2
before reading anything), ``late-replay`` (answers ``session/load`` before it replays the history, as
gemini 0.61.0 does). It says what it is: a one-line note on stderr at start and ``agentInfo``
``elynav-acp-standin`` / "Elynav ACP stand-in (not a model)".

Where it sits: ``elynav_nb/sandbox/acp``; imported by nothing in the library. The ACP backend's tests,
the notebooks and the README demo spawn it (``python -m elynav_nb.sandbox.acp.acp_standin`` or the
``elynav-acp-standin`` console script) instead of a real agent.

How data flows: stdin lines -> ``acp_wire.Connection`` -> ``Agent.begin_request`` /
``Agent.on_notification``: ``initialize``, ``session/new`` (then ``available_commands_update``),
``session/load`` (history replayed as updates, then ``null``), ``session/set_mode``, ``session/prompt``
(one ``acp_turns.Turn`` task per session at a time; saved to ``acp_sessions.SessionStore`` when it
ends) and ``session/cancel``. EOF on stdin cancels every turn (but one that runs ``ignore-cancel``,
which is waited for) and exits 0; SIGTERM kills the local commands and exits 143.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Coroutine
from typing import Any, NoReturn

from elynav_nb.sandbox.acp.acp_mcp import parse_mcp_servers
from elynav_nb.sandbox.acp.acp_sessions import (
    MODE_IDS,
    SessionState,
    SessionStore,
    modes_json,
    new_session_id,
    standin_home,
)
from elynav_nb.sandbox.acp.acp_tools import Children, ClientCapabilities
from elynav_nb.sandbox.acp.acp_turns import Turn, TurnContext
from elynav_nb.sandbox.acp.acp_wire import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    SERVER_ERROR,
    Connection,
    Reply,
    RpcError,
    start_stdin_reader,
)

__all__ = ["AGENT_INFO", "FAULT_VARIABLE", "Agent", "main"]

FAULT_VARIABLE = "ELYNAV_ACP_STANDIN_FAULT"
FAULTS = frozenset({"no-initialize", "no-load-session", "exit-at-start", "late-replay"})
LATE_REPLAY_DELAY = 0.1
AGENT_INFO = {"name": "elynav-acp-standin", "title": "Elynav ACP stand-in (not a model)", "version": "0.1.0"}
PROTOCOL_VERSION = 1
EXIT_SIGTERM = 143
EXIT_CRASH = 3
EXIT_AT_START = 2
SHUTDOWN_SECONDS = 5.0
STARTUP_NOTE = (
    "elynav-acp-standin: a scripted ACP stand-in, not a model (elynav_nb.sandbox.acp); "
    "replies follow @standin directives"
)
AVAILABLE_COMMANDS = [
    {
        "name": "standin",
        "description": "Scripted stand-in behaviour: write @standin <directive> lines in the prompt",
        "input": {"hint": "say <text> | think <text> | shell <command> | read <path> | mcp <server> <tool>"},
    }
]


def _object(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": "params must be an object"})
    return params


def _string(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": f"{key} must be a string"})
    return value


async def _value(value: Any) -> Any:
    return value


async def _never() -> Any:
    await asyncio.get_running_loop().create_future()


class Agent:
    """The ACP methods, over one ``Connection``."""

    def __init__(self, connection: Connection, store: SessionStore, fault: str) -> None:
        self.connection = connection
        self.store = store
        self.fault = fault
        self.children = Children()
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, SessionState] = {}
        self.turns: dict[str, Turn] = {}

    # -- dispatch -----------------------------------------------------------------------------------
    def begin_request(self, method: str, params: Any) -> Awaitable[Any]:
        if method == "initialize":
            return self.initialize(params)
        if method == "session/new":
            return self.new_session(params)
        if method == "session/load" and self.fault != "no-load-session":
            return self.load_session(params)
        if method == "session/set_mode":
            return self.set_mode(params)
        if method == "session/prompt":
            return self.prompt(params)
        raise RpcError(METHOD_NOT_FOUND, "Method not found", {"method": method})

    def on_notification(self, method: str, params: Any) -> None:
        if method == "session/cancel" and isinstance(params, dict):
            turn = self.turns.get(str(params.get("sessionId")))
            if turn is not None:
                turn.request_cancel()
        # any other notification is ignored, as JSON-RPC allows

    def session_of(self, params: dict[str, Any]) -> SessionState:
        session_id = _string(params, "sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", session_id)
        return session

    # -- methods ------------------------------------------------------------------------------------
    def initialize(self, params: Any) -> Awaitable[Any]:
        params = _object(params)
        if not isinstance(params.get("protocolVersion"), int):
            raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": "protocolVersion must be an integer"})
        if self.fault == "no-initialize":
            return _never()
        self.capabilities = ClientCapabilities.from_initialize(params.get("clientCapabilities"))
        return _value(
            {
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": self.fault != "no-load-session",
                    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                    "mcpCapabilities": {"http": True, "sse": False},
                },
                "authMethods": [],
                "agentInfo": dict(AGENT_INFO),
            }
        )

    def _session_setup(self, params: dict[str, Any]) -> tuple[str, list[Any]]:
        cwd = _string(params, "cwd")
        if not os.path.isabs(cwd):
            raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": "cwd must be an absolute path"})
        try:
            servers = parse_mcp_servers(params.get("mcpServers"))
        except ValueError as error:
            raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": str(error)}) from None
        return cwd, servers

    def _after_session(self, session_id: str) -> None:
        self.connection.notify(
            "session/update",
            {
                "sessionId": session_id,
                "update": {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": AVAILABLE_COMMANDS,
                },
            },
        )

    def new_session(self, params: Any) -> Awaitable[Any]:
        cwd, servers = self._session_setup(_object(params))
        session = SessionState(new_session_id(), cwd, mcp_servers=servers)
        self.sessions[session.session_id] = session
        self.store.save(session)
        return _value(
            Reply(
                {"sessionId": session.session_id, "modes": modes_json(session.mode)},
                lambda: self._after_session(session.session_id),
            )
        )

    def load_session(self, params: Any) -> Awaitable[Any]:
        params = _object(params)
        session_id = _string(params, "sessionId")
        cwd, servers = self._session_setup(params)
        if session_id in self.turns:
            raise RpcError(SERVER_ERROR, "a prompt is already running")
        session = self.store.load(session_id) or self.sessions.get(session_id)
        if session is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", session_id)
        session.cwd, session.mcp_servers = cwd, servers
        self.sessions[session_id] = session
        if self.fault == "late-replay":  # as gemini 0.61.0 does: the answer first, the history after it
            asyncio.get_running_loop().call_later(LATE_REPLAY_DELAY, self._replay, session)
        else:
            self._replay(session)
        return _value(Reply(None, lambda: self._after_session(session_id)))

    def _replay(self, session: SessionState) -> None:
        for entry in session.history:
            kind = "user_message_chunk" if entry["role"] == "user" else "agent_message_chunk"
            self.connection.notify(
                "session/update",
                {
                    "sessionId": session.session_id,
                    "update": {"sessionUpdate": kind, "content": {"type": "text", "text": entry["text"]}},
                },
            )

    def set_mode(self, params: Any) -> Awaitable[Any]:
        params = _object(params)
        session = self.session_of(params)
        mode_id = _string(params, "modeId")
        if mode_id not in MODE_IDS:
            raise RpcError(INVALID_PARAMS, "Invalid params", {"reason": f"unknown mode {mode_id!r}"})
        session.mode = mode_id
        self.store.save(session)
        self.connection.notify(
            "session/update",
            {
                "sessionId": session.session_id,
                "update": {"sessionUpdate": "current_mode_update", "currentModeId": mode_id},
            },
        )
        return _value({})

    def prompt(self, params: Any) -> Awaitable[Any]:
        params = _object(params)
        session = self.session_of(params)
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not all(
            isinstance(block, dict) and "type" in block for block in blocks
        ):
            raise RpcError(
                INVALID_PARAMS, "Invalid params", {"reason": "prompt must be a list of content blocks"}
            )
        if session.session_id in self.turns:
            raise RpcError(SERVER_ERROR, "a prompt is already running")
        context = TurnContext(self.connection, self.capabilities, self.children, self.exit_now)
        turn = Turn(context, session, blocks)
        turn.task = asyncio.create_task(turn.play(), name=f"acp-turn-{session.session_id}")
        self.turns[session.session_id] = turn
        return self._run_turn(session, turn)

    async def _run_turn(self, session: SessionState, turn: Turn) -> dict[str, Any]:
        assert turn.task is not None
        try:
            try:
                reason = await turn.task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if turn.cancelled and (current is None or not current.cancelling()):
                    return {"stopReason": "cancelled"}
                raise
            return {"stopReason": "cancelled" if turn.cancelled and reason == "end_turn" else reason}
        finally:
            self.turns.pop(session.session_id, None)
            session.turns = turn.number
            session.history.append({"role": "user", "text": turn.text})
            session.history.append({"role": "agent", "text": "".join(turn.said)})
            self.store.save(session)

    # -- ending -------------------------------------------------------------------------------------
    def exit_now(self, code: int) -> NoReturn:
        """Kill the local commands, flush, and leave at once (crash directive, SIGTERM)."""
        self.children.kill_all()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

    async def shutdown(self) -> None:
        """EOF on stdin: cancel every turn but the ones that ignore cancel, and wait for all."""
        for turn in list(self.turns.values()):
            turn.request_cancel()
        tasks = [task for task in self.connection.request_tasks if not task.done()]
        ignoring = {turn.task for turn in self.turns.values() if turn.ignore_cancel}
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=None if ignoring else SHUTDOWN_SECONDS)
            for task in pending:
                task.cancel()
        self.children.kill_all()


async def serve(fault: str) -> int:
    loop = asyncio.get_running_loop()
    connection = Connection(sys.stdout.buffer)
    agent = Agent(connection, SessionStore(standin_home()), fault)
    connection.handler = agent
    loop.add_signal_handler(signal.SIGTERM, agent.exit_now, EXIT_SIGTERM)
    lines = start_stdin_reader(loop)
    await connection.run(lines)
    await agent.shutdown()
    return 0


def _run(coroutine: Coroutine[Any, Any, int]) -> int:
    return asyncio.run(coroutine)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments and arguments[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    fault = os.environ.get(FAULT_VARIABLE, "")
    if fault and fault not in FAULTS:
        print(f"elynav-acp-standin: unknown {FAULT_VARIABLE}={fault!r}, ignored", file=sys.stderr)
        fault = ""
    if fault == "exit-at-start":
        print(f"elynav-acp-standin: exiting at start ({FAULT_VARIABLE}=exit-at-start)", file=sys.stderr)
        return EXIT_AT_START
    print(STARTUP_NOTE, file=sys.stderr, flush=True)
    return _run(serve(fault))


if __name__ == "__main__":
    sys.exit(main())
