"""A fault-injecting fake agent CLI for runner tests (not the stand-in: it misbehaves on purpose).

It speaks just enough of the claude stream-json protocol (``initialize``, one user turn, ``result``,
``interrupt``) and then does what ``FAKE_CLI_MODE`` says:

  echo          answer every turn with "echo: <text>" (the default)
  crash         start answering, then exit 3 mid-turn with a message on stderr
  hang          answer nothing to user messages and ignore interrupts
  deaf          like hang, and it answers no control request and ignores SIGINT and SIGTERM
  garbage       print non-JSON lines, then a normal answer
  huge          print one 50 MB JSON line (a tool result), then a normal answer
  stderr-flood  write 8 MB to stderr during the turn, then a normal answer
  exit-at-start exit 1 before answering ``initialize``, with a message on stderr
  grandchild    start ``sleep 300`` in its own session, print its pid, then hang (ignores interrupt)
  grandchild-interruptible  same, but honours interrupt (leaving the grandchild alive)
  refuse-root   exit 1 like claude does for root + bypassPermissions
  slow-init     never answer ``initialize``
  permission    ask ``can_use_tool`` for a Bash command and report the decision it gets
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

# ``FAKE_CLI_MODE_FILE``: a file holding the mode (a test switches it between processes; the runner's
# environment is frozen), else ``FAKE_CLI_MODE``.
_MODE_FILE = os.environ.get("FAKE_CLI_MODE_FILE", "")
MODE = (
    open(_MODE_FILE, encoding="utf-8").read().strip()
    if _MODE_FILE and os.path.exists(_MODE_FILE)
    else os.environ.get("FAKE_CLI_MODE", "echo")
)
SESSION_ID = "fake-session"
for index, word in enumerate(sys.argv):
    if word == "--session-id" and index + 1 < len(sys.argv):
        SESSION_ID = sys.argv[index + 1]
    if word.startswith("--resume="):
        SESSION_ID = word.split("=", 1)[1]

write_lock = threading.Lock()
interrupted = threading.Event()
permission_answers: dict[str, dict] = {}
permission_answered = threading.Condition()


def emit(message: dict) -> None:
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def result(text: str, *, is_error: bool = False, subtype: str = "success", reason: str = "completed") -> None:
    emit(
        {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": 5,
            "duration_api_ms": 1,
            "num_turns": 1,
            "result": text,
            "stop_reason": "end_turn",
            "session_id": SESSION_ID,
            "total_cost_usd": 0.25,
            "usage": {"input_tokens": 1, "output_tokens": 2},
            "permission_denials": [],
            "terminal_reason": reason,
        }
    )


def text(content: str) -> None:
    emit(
        {
            "type": "assistant",
            "message": {
                "id": "msg_fake",
                "role": "assistant",
                "model": "fake",
                "content": [{"type": "text", "text": content}],
            },
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
        }
    )


def init() -> None:
    emit(
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION_ID,
            "model": "fake",
            "tools": [],
            "mcp_servers": [],
            "agents": ["fake-agent"],
            "permissionMode": "default",
        }
    )


def start_grandchild() -> int:
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    return child.pid


def run_turn(prompt: str) -> None:
    init()
    if MODE == "crash":
        text("starting…")
        sys.stderr.write("fatal: the fake CLI crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE in ("hang", "deaf", "grandchild", "grandchild-interruptible"):
        if MODE not in ("hang", "deaf"):
            pid = start_grandchild()
            emit(
                {
                    "type": "assistant",
                    "message": {
                        "id": "msg_tool",
                        "role": "assistant",
                        "model": "fake",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "toolu_1",
                                "name": "Bash",
                                "input": {"command": "sleep 300", "pid": pid},
                            }
                        ],
                    },
                    "parent_tool_use_id": None,
                    "session_id": SESSION_ID,
                }
            )
        if MODE == "grandchild-interruptible":
            interrupted.wait()
            emit(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
                    },
                    "parent_tool_use_id": None,
                    "session_id": SESSION_ID,
                }
            )
            result("", is_error=True, subtype="error_during_execution", reason="aborted_tools")
            interrupted.clear()
            return
        while True:
            time.sleep(1)
    if MODE == "permission":
        emit(
            {
                "type": "control_request",
                "request_id": "perm-1",
                "request": {
                    "subtype": "can_use_tool",
                    "tool_name": "Bash",
                    "display_name": "Bash",
                    "input": {"command": "touch created.txt"},
                    "description": "Create a file",
                    "tool_use_id": "toolu_p",
                },
            }
        )
        with permission_answered:
            permission_answered.wait_for(lambda: "perm-1" in permission_answers)
        decision = permission_answers.pop("perm-1")
        allowed = decision.get("behavior") == "allow"
        content = f"ran {decision['updatedInput']['command']}" if allowed else decision.get("message", "")
        emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_p",
                            "content": content,
                            "is_error": not allowed,
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION_ID,
            }
        )
    if MODE == "garbage":
        with write_lock:
            sys.stdout.write('this is not json\n{"truncated": \n[1, 2, 3]\n')
            sys.stdout.flush()
    if MODE == "huge":
        payload = "x" * (50 * 1024 * 1024)
        emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": payload}],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION_ID,
            }
        )
    if MODE == "stderr-flood":
        block = ("stderr noise " * 80 + "\n").encode()
        for _ in range(8 * 1024 * 1024 // len(block)):
            sys.stderr.buffer.write(block)
        sys.stderr.flush()
    text(f"echo: {prompt}")
    result(f"echo: {prompt}")


def main() -> int:
    if MODE == "exit-at-start":
        sys.stderr.write("fatal: cannot start (fake)\n")
        return 1
    if MODE == "refuse-root":
        sys.stderr.write(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"
        )
        return 1
    if MODE == "deaf":  # a wedged CLI: once its turn starts it answers nothing and ignores SIGINT and SIGTERM
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for raw_line in sys.stdin:
        message = json.loads(raw_line)
        if message.get("type") == "control_response":
            envelope = message["response"]
            with permission_answered:
                permission_answers[envelope["request_id"]] = envelope.get("response", {})
                permission_answered.notify_all()
            continue
        if message.get("type") == "control_request":
            request = message["request"]
            if request["subtype"] == "initialize":
                if MODE == "slow-init":
                    continue
                emit(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": message["request_id"],
                            "response": {"agents": [{"name": "fake-agent"}]},
                        },
                    }
                )
            elif request["subtype"] == "interrupt":
                if MODE == "deaf":
                    continue
                emit(
                    {
                        "type": "control_response",
                        "response": {"subtype": "success", "request_id": message["request_id"]},
                    }
                )
                if MODE not in ("hang", "grandchild"):
                    interrupted.set()
            continue
        if message.get("type") == "user":
            content = message["message"]["content"]
            threading.Thread(target=run_turn, args=(content,), daemon=True).start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
