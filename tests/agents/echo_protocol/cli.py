"""The ``echo`` CLI: one JSON object a line on stdin and stdout, a conversation per process.

{"op": "hello", "id": I}                -> {"re": I, "session": S}
{"op": "prompt", "text": T}             -> {"ev": "start", "session": S}, one {"ev": "text", "text": W}
                                           per word of T (``slow ...``: 0.2 s apart), {"ev": "end"}
{"op": "stop"}                          -> the words stop; {"ev": "end", "cancelled": true}
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid

SESSION = uuid.uuid4().hex
_lock = threading.Lock()
_stop = threading.Event()


def say(message: dict[str, object]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def answer(text: str) -> None:
    say({"ev": "start", "session": SESSION})
    for word in text.split():
        if _stop.is_set():
            say({"ev": "end", "cancelled": True})
            return
        say({"ev": "text", "text": word + " "})
        if text.startswith("slow"):
            time.sleep(0.2)
    say({"ev": "end"})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if message["op"] == "hello":
            say({"re": message["id"], "session": SESSION})
        elif message["op"] == "prompt":
            _stop.clear()
            threading.Thread(target=answer, args=(message["text"],), daemon=True).start()
        elif message["op"] == "stop":
            _stop.set()


if __name__ == "__main__":
    main()
