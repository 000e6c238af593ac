"""A fault-injecting fake of ``codex app-server`` (JSON-RPC over stdio) for the codex runner's fast tests.

It answers the requests the runner sends (``initialize``, ``thread/start``, ``thread/resume``,
``turn/start``, ``turn/interrupt``, ``mcpServerStatus/list``) with the line shapes recorded from the
real codex-cli 0.171.0 (``tests/fixtures/codex_real/*app-server*``), keeps each thread's turn count in
``$CODEX_HOME/threads/<id>`` (so a new process resumes it, as after a kill -9), and plays one turn
according to ``FAKE_MODE``:

  echo      stream "echo: <prompt> (turn N)" in two deltas, N counting the thread's turns
  slow      stream 50 deltas 0.2 s apart; ``turn/interrupt`` ends the turn ``interrupted``
  deaf      like slow, but ignore ``turn/interrupt``, SIGINT and SIGTERM
  tools     five commands, 0.3 s apart (``turn/interrupt`` ends them), then the answer
  approval  first an unsupported request (``item/tool/requestUserInput``), then a command approval
            (integer id); the answer decides the command item's status and the message
  refuse    answer ``turn/start`` with a JSON-RPC error
  no-thread answer ``thread/start`` with a JSON-RPC error
  crash     start the turn, then exit 3 with a message on stderr
  retry     start the turn, then an ``error`` with ``willRetry`` every 0.2 s for ever

A prompt holding ``@json <text>`` gets ``<text>`` (up to the end of its line) as its final message.

Every message it reads is appended (JSON) to ``$FAKE_LOG`` when set. ``--version`` prints a version.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
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
HOME = Path(os.environ.get("CODEX_HOME", "."))
LOG = os.environ.get("FAKE_LOG")
write_lock = threading.Lock()
answers: dict[object, dict] = {}
answered = threading.Condition()
interrupted = threading.Event()


def emit(message: dict) -> None:
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def notify(method: str, **params: object) -> None:
    emit({"method": method, "params": params})


def thread_file(thread_id: str) -> Path:
    return HOME / "threads" / thread_id


def thread_answer(thread_id: str) -> dict:
    return {"thread": {"id": thread_id, "sessionId": thread_id, "modelProvider": "elynav", "model": "fake"}}


def ask(request_id: int, method: str, params: dict) -> dict:
    """A request of ours to the runner; waits (bounded) for its answer."""
    emit({"id": request_id, "method": method, "params": params})
    with answered:
        answered.wait_for(lambda: request_id in answers, timeout=30)
        return answers.pop(request_id, {})


def play_turn(thread_id: str, turn_id: str, prompt: str) -> None:
    turns = int(thread_file(thread_id).read_text() or "0") + 1
    thread_file(thread_id).write_text(str(turns))
    notify("turn/started", threadId=thread_id, turn={"id": turn_id, "status": "inProgress", "items": []})
    base = {"threadId": thread_id, "turnId": turn_id}
    status = "completed"
    text = f"echo: {prompt} (turn {turns})"
    if "@json " in prompt:  # the final message is the JSON text after it (structured-output tests)
        text = prompt.split("@json ", 1)[1].splitlines()[0]
    if MODE == "crash":
        sys.stderr.write("fake codex: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "retry":
        while True:
            notify("error", error={"message": "Reconnecting... 1/5"}, willRetry=True, **base)
            time.sleep(0.2)
    if MODE == "approval":
        unsupported = ask(1, "item/tool/requestUserInput", {**base, "itemId": "ask_1", "questions": []})
        item = {
            "type": "commandExecution",
            "id": "call_1",
            "command": "touch made.txt",
            "status": "inProgress",
        }
        notify("item/started", item=item, **base)
        answer = ask(
            0,
            "item/commandExecution/requestApproval",
            {**base, "itemId": "call_1", "command": "touch made.txt", "cwd": "."},
        )
        notify("serverRequest/resolved", threadId=thread_id, requestId=0)
        decision = answer.get("result", {}).get("decision")
        accepted = decision == "accept"
        done = {
            **item,
            "status": "completed" if accepted else "declined",
            "exitCode": 0 if accepted else None,
            "aggregatedOutput": "",
        }
        notify("item/completed", item=done, **base)
        text = f"{decision}; unsupported request answered: {json.dumps(unsupported.get('error', {}).get('message'))}"
    if MODE == "tools":  # five rounds of one command each, 0.3 s apart (an interrupt ends them)
        for index in range(5):
            if interrupted.is_set():
                break
            command = {
                "type": "commandExecution",
                "id": f"cmd_{index}",
                "command": f"echo {index}",
                "status": "inProgress",
            }
            notify("item/started", item=command, **base)
            finished = {**command, "status": "completed", "exitCode": 0, "aggregatedOutput": f"{index}\n"}
            notify("item/completed", item=finished, **base)
            time.sleep(0.3)
    item = {"type": "agentMessage", "id": f"msg_{turn_id}", "text": ""}
    notify("item/started", item=item, **base)
    pieces = (
        [text[: len(text) // 2], text[len(text) // 2 :]]
        if MODE not in ("slow", "deaf")
        else [f"w{index} " for index in range(50)]
    )
    for piece in pieces:
        if interrupted.is_set() and MODE != "deaf":
            status = "interrupted"
            break
        notify("item/agentMessage/delta", itemId=item["id"], delta=piece, **base)
        if MODE in ("slow", "deaf"):
            time.sleep(0.2)
    if status == "completed":
        notify("item/completed", item={**item, "text": "".join(pieces)}, **base)
        usage = {
            "inputTokens": 10 * turns,
            "cachedInputTokens": 0,
            "cacheWriteInputTokens": 0,
            "outputTokens": 2 * turns,
            "reasoningOutputTokens": 0,
        }
        notify("thread/tokenUsage/updated", tokenUsage={"total": usage, "last": usage}, **base)
    notify(
        "turn/completed",
        threadId=thread_id,
        turn={"id": turn_id, "status": status, "items": [], "error": None, "durationMs": 5},
    )


def main() -> None:
    if "--version" in sys.argv:
        print("codex-cli 0.0-fake")
        return
    if MODE == "deaf":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (HOME / "threads").mkdir(parents=True, exist_ok=True)
    notify("configWarning", summary="fake codex: no bubblewrap here", details=None)
    for line in sys.stdin:
        message = json.loads(line)
        if LOG:
            with open(LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps(message) + "\n")
        method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:  # an answer to one of our requests
            with answered:
                answers[request_id] = message
                answered.notify_all()
        elif method == "initialize":
            emit({"id": request_id, "result": {"userAgent": "fake", "codexHome": str(HOME)}})
        elif method == "thread/start" and MODE == "no-thread":
            emit({"id": request_id, "error": {"code": -32600, "message": "fake: no thread today"}})
        elif method == "thread/start":
            thread_id = str(uuid.uuid4())
            thread_file(thread_id).write_text("0")
            emit({"id": request_id, "result": thread_answer(thread_id)})
        elif method == "thread/resume":
            thread_id = params.get("threadId", "")
            if thread_file(thread_id).is_file():
                emit({"id": request_id, "result": thread_answer(thread_id)})
            else:
                emit(
                    {
                        "id": request_id,
                        "error": {"code": -32600, "message": f"no rollout found for thread id {thread_id}"},
                    }
                )
        elif method == "turn/start":
            if MODE == "refuse":
                emit({"id": request_id, "error": {"code": -32600, "message": "fake refusal"}})
                continue
            turn_id = str(uuid.uuid4())
            interrupted.clear()
            emit({"id": request_id, "result": {"turn": {"id": turn_id, "status": "inProgress", "items": []}}})
            prompt = " ".join(part.get("text", "") for part in params.get("input", []))
            threading.Thread(
                target=play_turn, args=(params["threadId"], turn_id, prompt), daemon=True
            ).start()
        elif method == "turn/interrupt":
            if MODE != "deaf":
                interrupted.set()
                emit({"id": request_id, "result": {}})
        elif method == "mcpServerStatus/list":
            emit(
                {
                    "id": request_id,
                    "result": {
                        "data": [
                            {"name": "crm", "runtimeStatus": "connected", "tools": {"search_accounts": {}}}
                        ],
                        "nextCursor": None,
                    },
                }
            )
        elif request_id is not None:
            emit({"id": request_id, "error": {"code": -32601, "message": f"unknown method {method}"}})


if __name__ == "__main__":
    main()
