"""The hook command a CLI runs for each tool call: its stdin to the runner's hook server, the answer to stdout.

Where it sits: written into a CLI's hook settings by the runner (gemini's ``settings.json`` hooks;
``protocols/gemini/hooks.py``) as ``<python> <this file> <folder> <cli>``; it runs as a plain script
(standard library only, no package import: it starts in a few tens of milliseconds). ``<folder>`` is
the runner's private hook folder (mode 0700, made by ``hooks/server.HookCommandServer``): its
``socket`` (the server) and ``token`` (the runner's secret, mode 0600).

How data flows::

    CLI -> stdin: the hook input (one JSON object) -> {"token", "cli", "input"} as one line on the
      Unix socket -> the server answers one line: the hook output -> stdout -> CLI

Fails closed: when the server cannot be reached or answers nothing, the command prints a deny
(``{"decision": "deny", "reason": ...}``) and exits 0, so the tool does not run unseen.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

ANSWER_TIMEOUT = 600.0  # the server bounds each callback itself; this only guards a vanished server


def _deny(reason: str) -> None:
    sys.stdout.write(json.dumps({"decision": "deny", "reason": reason}) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        _deny("elynav hook command: expected <hook folder> <cli>")
        return 0
    folder, cli = Path(argv[0]), argv[1]
    hook_input = sys.stdin.read()
    try:
        token = (folder / "token").read_text(encoding="utf-8").strip()
        request = json.dumps({"token": token, "cli": cli, "input": json.loads(hook_input or "{}")})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(ANSWER_TIMEOUT)
            connection.connect(str(folder / "socket"))
            connection.sendall(request.encode("utf-8") + b"\n")
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                answer += chunk
        output = json.loads(answer.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        _deny(f"Denied: the notebook's hook server could not be reached ({type(error).__name__}: {error})")
        return 0
    sys.stdout.write(json.dumps(output) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
