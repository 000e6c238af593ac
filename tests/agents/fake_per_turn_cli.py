"""A fault-injecting fake of ``codex exec --json`` and ``gemini -o stream-json`` for per-turn runner tests.

It reads its argv the way each CLI does (codex: ``exec --json ... [resume <id>] (-- PROMPT | -)``;
gemini: ``--session-id|--resume <id>``, ``--prompt=P`` or the prompt on stdin), keeps each
conversation in a file of the runner's home (codex ``$CODEX_HOME/sessions/.../rollout-*-<id>.jsonl``,
gemini ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*-<id8>.jsonl``) as the real ones do,
and answers one turn according to ``FAKE_MODE``:

  echo        answer "echo: <prompt> (turn N)", N counting the turns of the conversation
  slow        stream 50 text pieces 0.2 s apart (gemini) / think, then answer after 10 s (codex)
  deaf        like slow, but ignore SIGINT and SIGTERM
  crash       start the turn, then exit 3 with a message on stderr
  retry       start the turn, then print a non-fatal error line every 0.2 s for ever
  silent      start the turn, then print nothing for ever
  grandchild  start ``sleep 300`` in a session of its own (a tool), print its pid, then wait
  api-error   end the turn with the CLI's error line (codex turn.failed, gemini result error)
  warn        two non-fatal error lines (a reconnect, a warning), then a normal answer
  tools       five rounds of one shell tool call each (0.3 s apart), then a normal answer
  kernel-tool call the kernel tool ``$FAKE_TOOL`` (arguments: ``$FAKE_TOOL_ARGUMENTS``, JSON) as the real
              CLI does: the ``kernel`` server of its config (codex ``config.toml`` url +
              ``bearer_token_env_var``; gemini ``settings.json`` httpUrl + headers, ``${VAR}``
              expanded), MCP over streamable HTTP; the tool's text is the answer

In echo mode a prompt holding ``@json <text>`` is answered ``<text>`` (up to the end of its line).
Every run appends its argv (JSON) to ``$FAKE_ARGV_LOG`` when set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import uuid
from pathlib import Path

# ``FAKE_MODE_FILE``: a file holding the mode (a test switches it between processes; the runner's
# environment is frozen), else ``FAKE_MODE``.
_MODE_FILE = os.environ.get("FAKE_MODE_FILE", "")
MODE = (
    open(_MODE_FILE, encoding="utf-8").read().strip()
    if _MODE_FILE and os.path.exists(_MODE_FILE)
    else os.environ.get("FAKE_MODE", "echo")
)
FLAVOUR = os.environ.get("FAKE_FLAVOUR") or ("codex" if "exec" in sys.argv[1:3] else "gemini")


def emit(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def argument_after(flag: str) -> str | None:
    arguments = sys.argv[1:]
    for index, word in enumerate(arguments):
        if word == flag and index + 1 < len(arguments):
            return arguments[index + 1]
    return None


def read_prompt() -> str:
    arguments = sys.argv[1:]
    for word in arguments:
        if word.startswith("--prompt="):
            return word.split("=", 1)[1]
    if "--" in arguments:
        return arguments[arguments.index("--") + 1]
    return sys.stdin.read()  # codex "-" and gemini without --prompt: the prompt is piped


def conversation_file(conversation_id: str) -> Path:
    if FLAVOUR == "codex":
        folder = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "01" / "01"
        return folder / f"rollout-2026-01-01T00-00-00-{conversation_id}.jsonl"
    project = Path.cwd().name
    folder = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / project / "chats"
    return folder / f"session-2026-01-01T00-00-{conversation_id[:8]}.jsonl"


def refuse(message: str, code: int) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(code)


def main() -> None:
    if os.environ.get("FAKE_ARGV_LOG"):
        with open(os.environ["FAKE_ARGV_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps(sys.argv[1:]) + "\n")
    if MODE in ("deaf",):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    prompt = read_prompt()
    if FLAVOUR == "codex":
        resumed = argument_after("resume")
        conversation_id = resumed or str(uuid.uuid4())
        if resumed and not conversation_file(resumed).exists():
            refuse(f"Error: thread/resume: thread/resume failed: no rollout found for thread id {resumed}", 1)
    else:
        resumed = argument_after("--resume")
        preset = argument_after("--session-id")
        conversation_id = resumed or preset or str(uuid.uuid4())
        if resumed and not conversation_file(resumed).exists():
            refuse("Error resuming session: No previous sessions found for this project.", 42)
        if preset and conversation_file(preset).exists():
            refuse(
                f'Error starting session: Session ID "{preset}" already exists. Use --resume to resume it.',
                42,
            )
    record = conversation_file(conversation_id)
    record.parent.mkdir(parents=True, exist_ok=True)
    with record.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"prompt": prompt}) + "\n")
    turn_number = len(record.read_text(encoding="utf-8").splitlines())

    if FLAVOUR == "codex":
        emit({"type": "thread.started", "thread_id": conversation_id})
        emit({"type": "turn.started"})
    else:
        emit({"type": "init", "session_id": conversation_id, "model": "fake-gemini"})
        emit({"type": "message", "role": "user", "content": prompt})
    run_mode(prompt, turn_number)


def kernel_server() -> tuple[str, dict[str, str]]:
    """The URL and headers of the ``kernel`` MCP server in this CLI's config."""
    if FLAVOUR == "codex":
        config = tomllib.loads((Path(os.environ["CODEX_HOME"]) / "config.toml").read_text(encoding="utf-8"))
        server = config["mcp_servers"]["kernel"]
        return server["url"], {
            "Authorization": f"Bearer {os.environ.get(server['bearer_token_env_var'], '')}"
        }
    settings_file = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json"
    server = json.loads(settings_file.read_text(encoding="utf-8"))["mcpServers"]["kernel"]
    headers = {}
    for name, value in server.get("headers", {}).items():
        for variable, variable_value in os.environ.items():
            value = value.replace("${" + variable + "}", variable_value)
        headers[name] = value
    return server["httpUrl"], headers


def mcp_post(url: str, headers: dict[str, str], message: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            return response.status, dict(response.headers), json.loads(body) if body else {}
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), {}


def call_kernel_tool(name: str, arguments: dict) -> tuple[str, bool]:
    url, headers = kernel_server()
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "fake", "version": "1"},
    }
    status, response_headers, _ = mcp_post(
        url, headers, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
    )
    if status != 200:
        return f"kernel server refused initialize: HTTP {status}", True
    session = {key.lower(): value for key, value in response_headers.items()}["mcp-session-id"]
    headers = {**headers, "Mcp-Session-Id": session}
    mcp_post(url, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": name, "arguments": arguments}
    status, _, answer_body = mcp_post(
        url, headers, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
    )
    if status != 200:
        return f"kernel server refused the call: HTTP {status}", True
    result = answer_body["result"]
    return "".join(part.get("text", "") for part in result["content"]), bool(result.get("isError"))


def run_kernel_tool(turn_number: int) -> None:
    name = os.environ["FAKE_TOOL"]
    arguments = json.loads(os.environ.get("FAKE_TOOL_ARGUMENTS") or "{}")
    if FLAVOUR == "codex":
        item = {
            "id": "item_0",
            "type": "mcp_tool_call",
            "server": "kernel",
            "tool": name,
            "arguments": arguments,
        }
        emit(
            {"type": "item.started", "item": {**item, "result": None, "error": None, "status": "in_progress"}}
        )
        text, is_error = call_kernel_tool(name, arguments)
        content = {"content": [{"type": "text", "text": text}], "structured_content": None}
        done = (
            {"result": None, "error": {"message": text}} if is_error else {"result": content, "error": None}
        )
        emit(
            {
                "type": "item.completed",
                "item": {**item, **done, "status": "failed" if is_error else "completed"},
            }
        )
    else:
        tool_id = f"mcp_kernel_{name}__1"
        emit(
            {
                "type": "tool_use",
                "tool_name": f"mcp_kernel_{name}",
                "tool_id": tool_id,
                "parameters": arguments,
            }
        )
        text, is_error = call_kernel_tool(name, arguments)
        result = {"type": "tool_result", "tool_id": tool_id, "status": "error" if is_error else "success"}
        if is_error:
            result["error"] = {"type": "mcp_tool_error", "message": text}
        else:
            result["output"] = text
        emit(result)
    answer(f"tool said: {text}", turn_number)


def answer(text: str, turn_number: int) -> None:
    if FLAVOUR == "codex":
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text}})
        usage = {"input_tokens": 10 * turn_number, "output_tokens": 2 * turn_number}
        emit({"type": "turn.completed", "usage": usage})
    else:
        emit({"type": "message", "role": "assistant", "content": text, "delta": True})
        emit({"type": "result", "status": "success", "stats": {"input_tokens": 10, "output_tokens": 2}})


def run_mode(prompt: str, turn_number: int) -> None:
    if MODE == "echo" and "@json " in prompt:  # structured-output tests: the JSON text after it
        answer(prompt.split("@json ", 1)[1].splitlines()[0], turn_number)
    elif MODE == "echo":
        answer(f"echo: {prompt[-60:]} (turn {turn_number})", turn_number)
    elif MODE in ("slow", "deaf"):
        for index in range(50):
            if FLAVOUR == "codex":
                emit(
                    {
                        "type": "item.completed",
                        "item": {"id": f"r{index}", "type": "reasoning", "text": "hmm"},
                    }
                )
            else:
                emit({"type": "message", "role": "assistant", "content": f"piece{index} ", "delta": True})
            time.sleep(0.2)
        answer("done", turn_number)
    elif MODE == "crash":
        sys.stderr.write("fatal: the fake CLI crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif MODE == "retry":
        attempt = 0
        while True:
            attempt += 1
            if FLAVOUR == "codex":
                emit({"type": "error", "message": f"Reconnecting... {attempt}/5 (connection refused)"})
            else:
                emit({"type": "error", "severity": "error", "message": f"retry {attempt}"})
            time.sleep(0.2)
    elif MODE == "silent":
        time.sleep(600)
    elif MODE == "tools":
        for index in range(5):
            if FLAVOUR == "codex":
                item = {
                    "id": f"cmd_{index}",
                    "type": "command_execution",
                    "command": f"echo {index}",
                    "status": "in_progress",
                }
                emit({"type": "item.started", "item": item})
                done = {**item, "status": "completed", "aggregated_output": f"{index}\n", "exit_code": 0}
                emit({"type": "item.completed", "item": done})
            else:
                parameters = {"command": f"echo {index}"}
                emit(
                    {
                        "type": "tool_use",
                        "tool_name": "run_shell_command",
                        "tool_id": f"t{index}",
                        "parameters": parameters,
                    }
                )
                emit(
                    {"type": "tool_result", "tool_id": f"t{index}", "status": "success", "output": f"{index}"}
                )
            time.sleep(0.3)
        answer(f"five tool rounds (turn {turn_number})", turn_number)
    elif MODE == "grandchild":
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        if FLAVOUR == "codex":
            item = {
                "id": "item_0",
                "type": "command_execution",
                "command": "sleep 300",
                "status": "in_progress",
            }
            emit({"type": "item.started", "item": item})
        else:
            emit({"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1", "parameters": {}})
        sys.stderr.write(f"grandchild {child.pid}\n")
        sys.stderr.flush()
        time.sleep(600)
    elif MODE == "warn":
        if FLAVOUR == "codex":
            emit({"type": "error", "message": "Reconnecting... 1/5 (stream disconnected)"})
            emit(
                {
                    "type": "item.completed",
                    "item": {"id": "item_0", "type": "error", "message": "Model metadata not found"},
                }
            )
        else:
            emit({"type": "error", "severity": "warning", "message": "Loop detected, continuing"})
            emit(
                {
                    "type": "error",
                    "severity": "error",
                    "message": "Model stream ended without a finish reason.",
                }
            )
        answer(f"echo: {prompt[-60:]} (turn {turn_number})", turn_number)
    elif MODE == "kernel-tool":
        run_kernel_tool(turn_number)
    elif MODE == "api-error":
        if FLAVOUR == "codex":
            emit({"type": "error", "message": "unexpected status 400 (fake)"})
            emit({"type": "turn.failed", "error": {"message": "unexpected status 400 (fake)"}})
            sys.exit(1)
        emit(
            {
                "type": "result",
                "status": "error",
                "error": {"type": "unknown", "message": "[API Error: fake]"},
            }
        )
        sys.exit(144)


if __name__ == "__main__":
    main()
