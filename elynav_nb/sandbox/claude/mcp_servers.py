"""MCP servers of the stand-in: ``--mcp-config`` / ``.mcp.json`` loading, and a real MCP client per server.

Where it sits: ``claude_standin`` loads the configuration at start-up (``load_mcp_configuration``, which
raises ``FlagError`` with the real CLI's text on a bad file) and starts an ``McpHub`` in the background;
``tool_calls`` calls ``McpHub.call_tool`` for ``@standin mcp``. Stdio servers are spawned; ``sdk``
servers (in the host's process) are reached over the control channel (``sdk_mcp``) once the host's
``initialize`` arrives; an http/sse entry is reported ``failed`` (the stand-in does not dial out).

Each stdio server runs **in the stand-in's own process group**, as under the real CLI: the mcp SDK's
``stdio_client`` starts servers in a new session, so ``same_group_stdio_transport`` below spawns the
server itself and hands the SDK ``Client`` the usual pair of message streams. ``${VAR}`` and
``${VAR:-default}`` are expanded in ``command``, ``args``, ``env``, ``url`` and ``headers``.

Data flow: config text -> ``McpServerConfig`` -> ``McpHub`` task per server (``Client`` context held open
until shutdown) -> ``init.mcp_servers`` status, ``mcp_status`` entries, tool calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.streams.text import TextReceiveStream

from elynav_nb.sandbox.claude.args import FlagError
from elynav_nb.sandbox.claude.sdk_mcp import ControlChannel, sdk_control_transport

__all__ = [
    "McpHub",
    "McpServerConfig",
    "McpServerState",
    "McpToolOutcome",
    "expand_variables",
    "load_mcp_configuration",
    "same_group_stdio_transport",
]

TIMINGS_VARIABLE = (
    "ELYNAV_STANDIN_TOOL_TIMINGS"  # a file: the round trip of each MCP call, as the CLI sees it
)
CONNECT_TIMEOUT_SECONDS = 30.0
CLOSE_TIMEOUT_SECONDS = 2.0
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(text: str, environment: dict[str, str]) -> str:
    """``${VAR}`` -> its value; ``${VAR:-default}`` -> value or default; an unset ``${VAR}`` stays as written."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environment.get(name)
        if value:
            return value
        if default is not None:
            return default
        return value if value is not None else match.group(0)

    return _VARIABLE.sub(replace, text)


def _expand_any(value: Any, environment: dict[str, str]) -> Any:
    if isinstance(value, str):
        return expand_variables(value, environment)
    if isinstance(value, list):
        return [_expand_any(item, environment) for item in value]
    if isinstance(value, dict):
        return {key: _expand_any(item, environment) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    transport: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    source: str = "dynamic"

    def public_config(self) -> dict[str, Any]:
        """The ``config`` object of an ``mcp_status`` entry (no env values: they may hold secrets)."""
        if self.transport == "stdio":
            return {"type": "stdio", "command": self.command, "args": list(self.args)}
        if self.transport == "sdk":
            return {"type": "sdk", "name": self.name}
        return {"type": self.transport, "url": self.url}


def _servers_from_object(loaded: object, source: str, environment: dict[str, str]) -> list[McpServerConfig]:
    if not isinstance(loaded, dict):
        raise FlagError("Error: Invalid MCP configuration:\nMCP config is not a valid JSON object")
    servers = loaded.get("mcpServers")
    if servers is None:
        found = ", ".join(f'"{key}"' for key in loaded) or "nothing"
        raise FlagError(
            'Error: Invalid MCP configuration:\nmcpServers: Missing "mcpServers" — found '
            f'{found} instead. Claude Code reads MCP servers from the "mcpServers" key.'
        )
    if not isinstance(servers, dict):
        raise FlagError("Error: Invalid MCP configuration:\nmcpServers: Expected object")
    configs: list[McpServerConfig] = []
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            continue
        expanded = _expand_any(raw, environment)
        transport = str(expanded.get("type", "stdio"))
        env = expanded.get("env") or {}
        configs.append(
            McpServerConfig(
                name=str(name),
                transport=transport,
                command=str(expanded.get("command", "")),
                args=[str(argument) for argument in expanded.get("args", []) or []],
                env={str(key): str(value) for key, value in env.items()} if isinstance(env, dict) else {},
                url=str(expanded.get("url", "")),
                source=source,
            )
        )
    return configs


def load_mcp_configuration(
    mcp_config_arguments: list[str], *, cwd: Path, strict: bool, environment: dict[str, str]
) -> list[McpServerConfig]:
    """Servers from ``--mcp-config`` (files or JSON strings) plus the cwd's ``.mcp.json`` unless strict."""
    configs: list[McpServerConfig] = []
    for argument in mcp_config_arguments:
        text = argument
        if not argument.lstrip().startswith("{"):
            path = Path(argument) if os.path.isabs(argument) else cwd / argument
            if not path.is_file():
                raise FlagError(f"Error: Invalid MCP configuration:\nMCP config file not found: {path}")
            text = path.read_text(encoding="utf-8")
        try:
            loaded = json.loads(text)
        except ValueError as error:
            raise FlagError(
                f"Error: Invalid MCP configuration:\nMCP config is not a valid JSON: {error}"
            ) from None
        configs.extend(_servers_from_object(loaded, "dynamic", environment))
    project_file = cwd / ".mcp.json"
    if not strict and project_file.is_file():
        try:
            loaded = json.loads(project_file.read_text(encoding="utf-8"))
            configs.extend(_servers_from_object(loaded, "project", environment))
        except (ValueError, FlagError):
            pass  # a broken project file is skipped in --print mode
    by_name: dict[str, McpServerConfig] = {}
    for config in configs:
        by_name.setdefault(config.name, config)
    return list(by_name.values())


@asynccontextmanager
async def same_group_stdio_transport(
    config: McpServerConfig, errlog: TextIO, cwd: str
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn a stdio MCP server in our process group and bridge its pipes to SDK message streams."""
    import mcp.types as mcp_types
    from mcp.shared.message import SessionMessage

    environment = dict(os.environ)
    environment.update(config.env)
    process = await anyio.open_process(
        [config.command, *config.args], env=environment, stderr=errlog, cwd=cwd
    )  # no start_new_session: the server shares the stand-in's group, as under the real CLI
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    async def pump_server_output() -> None:
        assert process.stdout is not None
        pending = ""
        try:
            async with read_writer:
                async for chunk in TextReceiveStream(process.stdout, encoding="utf-8", errors="replace"):
                    lines = (pending + chunk).split("\n")
                    pending = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            parsed: Any = SessionMessage(
                                mcp_types.jsonrpc_message_adapter.validate_json(line)
                            )
                        except ValueError as error:
                            parsed = error
                        await read_writer.send(parsed)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            return

    async def pump_server_input() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    payload = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((payload + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(pump_server_output)
        task_group.start_soon(pump_server_input)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                if process.stdin is not None:
                    try:
                        await process.stdin.aclose()
                    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS):
                        await process.wait()
                await read_stream.aclose()
            task_group.cancel_scope.cancel()


def _record_call_time(server_name: str, tool_name: str, seconds: float) -> None:
    """One line per tool call in ``$ELYNAV_STANDIN_TOOL_TIMINGS`` when set (``benchmarks/kernel_tools.py``)."""
    path = os.environ.get(TIMINGS_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as timings:
            timings.write(json.dumps({"server": server_name, "tool": tool_name, "seconds": seconds}) + "\n")


@dataclass
class McpServerState:
    config: McpServerConfig
    status: str = "pending"
    error: str | None = None
    client: Any = None
    server_info: dict[str, Any] | None = None
    tool_names: list[str] = field(default_factory=list)
    tool_titles: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class McpToolOutcome:
    content: list[dict[str, Any]]
    structured_content: dict[str, Any] | None
    is_error: bool
    server_info: dict[str, Any] | None


class McpHub:
    """One background task per configured server; each holds its ``Client`` open until ``close``."""

    def __init__(self, configs: list[McpServerConfig], cwd: str) -> None:
        self.states = [McpServerState(config) for config in configs]
        self.cwd = cwd
        self._shutdown = asyncio.Event()
        self._settled: list[asyncio.Event] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._channel: ControlChannel | None = None

    def start(self) -> None:
        """Connect every server but the host's SDK servers (``start_sdk_servers``)."""
        for state in self.states:
            if state.config.transport != "sdk":
                self._start_one(state)

    def start_sdk_servers(self, channel: ControlChannel) -> None:
        """Connect the host's SDK servers over ``channel`` (once: at the host's ``initialize``)."""
        if self._channel is not None:
            return
        self._channel = channel
        for state in self.states:
            if state.config.transport == "sdk":
                self._start_one(state)

    def _start_one(self, state: McpServerState) -> None:
        settled = asyncio.Event()
        self._settled.append(settled)
        self._tasks.append(asyncio.create_task(self._serve(state, settled)))

    async def wait_ready(self) -> None:
        """Return once every server is connected or failed (the real CLI's init waits the same way).

        A server still connecting after ``CONNECT_TIMEOUT_SECONDS`` is cancelled and reported failed.
        """
        for settled, task in zip(self._settled, self._tasks):
            try:
                await asyncio.wait_for(asyncio.shield(settled.wait()), CONNECT_TIMEOUT_SECONDS)
            except TimeoutError:
                task.cancel()
                await asyncio.wait([task], timeout=CLOSE_TIMEOUT_SECONDS + 1.0)

    def find(self, server_name: str) -> McpServerState | None:
        for state in self.states:
            if state.config.name == server_name:
                return state
        return None

    def tool_names(self) -> list[str]:
        names: list[str] = []
        for state in self.states:
            if state.status == "connected":
                for tool_name in state.tool_names:
                    names.append(f"mcp__{state.config.name}__{tool_name}")
        return sorted(names)

    async def call_tool(self, server_name: str, tool_name: str, arguments: dict[str, Any]) -> McpToolOutcome:
        state = self.find(server_name)
        if state is None or state.status != "connected" or state.client is None:
            reason = "not configured" if state is None else f"not connected ({state.status})"
            return McpToolOutcome(
                [{"type": "text", "text": f"MCP server {server_name} is {reason}"}], None, True, None
            )
        started = time.perf_counter()
        try:
            result = await state.client.call_tool(tool_name, arguments)
        except Exception as error:  # noqa: BLE001 - any client failure becomes an is_error tool result
            return McpToolOutcome(
                [{"type": "text", "text": f"MCP error: {error}"}], None, True, state.server_info
            )
        _record_call_time(server_name, tool_name, time.perf_counter() - started)
        blocks = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
        return McpToolOutcome(blocks, result.structured_content, bool(result.is_error), state.server_info)

    async def close(self) -> None:
        self._shutdown.set()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=CLOSE_TIMEOUT_SECONDS + 1.0)

    async def _serve(self, state: McpServerState, settled: asyncio.Event) -> None:
        from mcp import Client

        config = state.config
        if config.transport == "sdk" and self._channel is not None:
            await self._hold_open(state, settled, Client(sdk_control_transport(config.name, self._channel)))
            return
        if config.transport != "stdio":
            state.status = "failed"
            state.error = f"the elynav stand-in connects stdio servers only (this one is {config.transport})"
            settled.set()
            return
        # a real fd, as the mcp SDK needs for the child's stderr
        with tempfile.TemporaryFile("w+") as error_log:
            await self._hold_open(
                state, settled, Client(same_group_stdio_transport(config, error_log, self.cwd))
            )

    async def _hold_open(self, state: McpServerState, settled: asyncio.Event, connecting: Any) -> None:
        """Connect ``connecting`` (an ``mcp.Client``), list its tools, keep it open until ``close``."""
        config = state.config
        try:
            async with connecting as client:
                listed = await client.list_tools()
                state.tool_names = [tool.name for tool in listed.tools]
                for tool in listed.tools:
                    state.tool_titles[tool.name] = tool.title or tool.name.replace("_", " ").title()
                info = getattr(client, "server_info", None)
                if info is not None:
                    state.server_info = {"name": info.name, "version": info.version}
                state.client = client
                state.status = "connected"
                settled.set()
                try:
                    await self._shutdown.wait()
                finally:
                    state.client = None
        except FileNotFoundError:
            state.status = "failed"
            state.error = f"ENOENT: no such file or directory, posix_spawn '{config.command}'"
        except asyncio.CancelledError:
            if state.status != "connected":
                state.status = "failed"
                state.error = f"connection timed out after {CONNECT_TIMEOUT_SECONDS:.0f} s"
        except Exception as error:  # noqa: BLE001 - a failed server never fails the session
            state.status = "failed"
            state.error = f"{type(error).__name__}: {error}"
        finally:
            settled.set()
