"""A tiny fake claude CLI for widget tests: streams deltas, calls tools and asks permission.

It speaks the claude stream-json protocol the runner expects (``initialize``, user lines,
``interrupt``, ``can_use_tool`` control requests, ``result``) and does what ``FAKE_CLI_MODE`` says:

  stream      thinking deltas, ``FAKE_DELTAS`` text deltas of 5 characters (default 2000), a Bash
              tool call and its result, more text with HTML-special characters, then ``result``
  slow        one text delta every 50 ms until interrupted, then an interrupted ``result``
  permission  a Bash tool call, a ``can_use_tool`` request; runs the tool when allowed, reports a
              denial when denied; on interrupt it withdraws the request (``control_cancel_request``)
  error       some text, an API error on the assistant line, then an error ``result``

``FAKE_DELTA_PAUSE`` (seconds, default 0) is slept after every 10 text deltas.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

MODE = os.environ.get("FAKE_CLI_MODE", "stream")
DELTAS = int(os.environ.get("FAKE_DELTAS", "2000"))
DELTA_PAUSE = float(os.environ.get("FAKE_DELTA_PAUSE", "0"))
COST_PER_TURN = 0.125
SESSION_ID = "fake-widget-session"
for index, word in enumerate(sys.argv):
    if word == "--session-id" and index + 1 < len(sys.argv):
        SESSION_ID = sys.argv[index + 1]

write_lock = threading.Lock()
interrupted = threading.Event()
permission_answers: dict[str, dict[str, Any]] = {}
permission_answered = threading.Condition()
turns_done = 0


def emit(message: dict[str, Any]) -> None:
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def stream_event(event: dict[str, Any]) -> None:
    emit({"type": "stream_event", "event": event, "parent_tool_use_id": None, "session_id": SESSION_ID})


def message_start(message_id: str) -> None:
    stream_event({"type": "message_start", "message": {"id": message_id, "role": "assistant"}})


def text_delta(text: str) -> None:
    stream_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})


def thinking_delta(text: str) -> None:
    stream_event(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": text}}
    )


def assistant(message_id: str, blocks: list[dict[str, Any]], **extra: Any) -> None:
    emit(
        {
            "type": "assistant",
            "message": {"id": message_id, "role": "assistant", "model": "fake", "content": blocks},
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
            **extra,
        }
    )


def tool_result(tool_use_id: str, content: str, *, is_error: bool = False) -> None:
    emit(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": content,
                        "is_error": is_error,
                    }
                ],
            },
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
        }
    )


def result(
    text: str,
    *,
    is_error: bool = False,
    subtype: str = "success",
    reason: str = "completed",
    denials: list[dict[str, Any]] | None = None,
) -> None:
    global turns_done
    turns_done += 1
    emit(
        {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": 7,
            "duration_api_ms": 3,
            "num_turns": 1,
            "result": text,
            "stop_reason": "end_turn",
            "session_id": SESSION_ID,
            "total_cost_usd": COST_PER_TURN * turns_done,
            "usage": {"input_tokens": 3, "output_tokens": 5},
            "permission_denials": denials or [],
            "terminal_reason": reason,
        }
    )


def init() -> None:
    emit(
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION_ID,
            "model": "fake",
            "tools": ["Bash"],
            "mcp_servers": [],
            "agents": [],
            "permissionMode": "default",
        }
    )


def run_stream_turn() -> None:
    message_start("msg_1")
    thinking_delta("Let me think ")
    thinking_delta("about <this>.")
    written: list[str] = []
    for index in range(DELTAS):
        piece = f"{index % 10000:04d}"[-4:] + " "
        text_delta(piece)
        written.append(piece)
        if DELTA_PAUSE and index % 10 == 9:
            time.sleep(DELTA_PAUSE)
    assistant(
        "msg_1",
        [
            {"type": "thinking", "thinking": "Let me think about <this>."},
            {"type": "text", "text": "".join(written)},
        ],
    )
    assistant(
        "msg_2", [{"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "echo <hi>"}}]
    )
    tool_result("toolu_ls", "<hi>\n")
    message_start("msg_3")
    closing = "\nDone: 1 < 2 & \"quotes\" 'too' <b>not bold</b>"
    text_delta(closing)
    assistant("msg_3", [{"type": "text", "text": closing}])
    result("".join(written) + closing)


def run_slow_turn() -> None:
    message_start("msg_slow")
    for _ in range(600):
        if interrupted.wait(0.05):
            break
        text_delta("slow ")
    interrupted.clear()
    result("", is_error=True, subtype="error_during_execution", reason="aborted_streaming")


def run_permission_turn() -> None:
    command = "touch written.txt"
    assistant("msg_p", [{"type": "tool_use", "id": "toolu_p", "name": "Bash", "input": {"command": command}}])
    emit(
        {
            "type": "control_request",
            "request_id": "perm_1",
            "request": {
                "subtype": "can_use_tool",
                "tool_name": "Bash",
                "input": {"command": command},
                "tool_use_id": "toolu_p",
            },
        }
    )
    answer: dict[str, Any] | None = None
    deadline = time.monotonic() + 30
    with permission_answered:
        while answer is None and not interrupted.is_set() and time.monotonic() < deadline:
            permission_answered.wait(0.05)
            answer = permission_answers.pop("perm_1", None)
    if answer is None:
        emit({"type": "control_cancel_request", "request_id": "perm_1"})
        interrupted.clear()
        result("", is_error=True, subtype="error_during_execution", reason="aborted_tools")
        return
    if answer.get("behavior") == "allow":
        tool_result("toolu_p", f"ran: {command}")
        message_start("msg_after")
        text_delta("the tool ran")
        result("the tool ran")
        return
    message = str(answer.get("message", ""))
    tool_result("toolu_p", f"denied: {message}", is_error=True)
    message_start("msg_after")
    text_delta("the tool was denied")
    result(
        "the tool was denied",
        denials=[{"tool_name": "Bash", "tool_use_id": "toolu_p", "tool_input": {"command": command}}],
    )


def run_error_turn() -> None:
    message_start("msg_e")
    text_delta("partial answer")
    assistant("msg_e", [{"type": "text", "text": "partial answer"}], error="rate_limit")
    result("API Error: rate limited", is_error=True)


def run_turn() -> None:
    init()
    if MODE == "slow":
        run_slow_turn()
    elif MODE == "permission":
        run_permission_turn()
    elif MODE == "error":
        run_error_turn()
    else:
        run_stream_turn()


def main() -> int:
    for raw_line in sys.stdin:
        message = json.loads(raw_line)
        message_type = message.get("type")
        if message_type == "control_request":
            subtype = message["request"]["subtype"]
            emit(
                {
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": message["request_id"], "response": {}},
                }
            )
            if subtype == "interrupt":
                interrupted.set()
        elif message_type == "control_response":
            envelope = message.get("response", {})
            with permission_answered:
                permission_answers[envelope.get("request_id", "")] = envelope.get("response", {})
                permission_answered.notify_all()
        elif message_type == "user":
            threading.Thread(target=run_turn, daemon=True).start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
