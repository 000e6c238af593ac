"""Test helper: drive ``python -m elynav_nb.sandbox.claude.claude_standin`` with raw stdin/stdout bytes.

Where it sits: tests/sandbox only (the agent runner is deliberately not used). Each ``StandinProcess``
runs the stand-in in an isolated ``HOME`` and ``ELYNAV_STANDIN_HOME``; two reader threads collect stdout
lines (parsed as JSON) and stderr text; ``read_until`` waits, with a bound, for a matching line.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
BASE_FLAGS = ["-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
Predicate = Callable[[dict[str, Any]], bool]


def standin_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("ELYNAV_STANDIN")}
    environment.pop("IS_SANDBOX", None)
    environment["HOME"] = str(home)
    environment["ELYNAV_STANDIN_HOME"] = str(home / "standin")
    environment["PYTHONPATH"] = str(REPOSITORY_ROOT) + os.pathsep + environment.get("PYTHONPATH", "")
    if extra:
        environment.update(extra)
    return environment


def is_result(message: dict[str, Any]) -> bool:
    return message.get("type") == "result"


def user_message(text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "default",
    }


def control_request(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}


def line_kind(message: dict[str, Any]) -> str:
    """``system/init``, ``stream_event/message_start``, ``assistant``, ``result``..."""
    kind = str(message.get("type"))
    if kind == "system":
        return f"system/{message.get('subtype')}"
    if kind == "stream_event":
        return f"stream_event/{message['event']['type']}"
    return kind


class StandinProcess:
    def __init__(
        self, arguments: list[str], *, home: Path, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        command = [sys.executable, "-m", "elynav_nb.sandbox.claude.claude_standin", *arguments]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd or home),
            env=standin_environment(home, env),
        )
        self.messages: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._incoming: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr_chunks: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.raw_lines.append(raw)
            self._incoming.put(json.loads(raw))
        self._incoming.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for chunk in self.process.stderr:
            self._stderr_chunks.append(chunk)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr_chunks).decode("utf-8", errors="replace")

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.process.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def say(self, text: str) -> None:
        self.send(user_message(text))

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def read_until(self, predicate: Predicate, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Messages read from now up to and including the first one matching ``predicate``."""
        deadline = time.monotonic() + timeout
        collected: list[dict[str, Any]] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no matching line within {timeout} s; got {[line_kind(m) for m in collected]}; stderr={self.stderr!r}"
                )
            try:
                message = self._incoming.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError(
                    f"stdout closed; got {[line_kind(m) for m in collected]}; stderr={self.stderr!r}"
                )
            self.messages.append(message)
            collected.append(message)
            if predicate(message):
                return collected

    def read_turn(self, timeout: float = 20.0) -> list[dict[str, Any]]:
        return self.read_until(is_result, timeout)

    def wait(self, timeout: float = 20.0) -> int:
        code = self.process.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=5)
        return code

    def remaining_messages(self) -> list[dict[str, Any]]:
        """After exit: every line not yet read."""
        rest: list[dict[str, Any]] = []
        while True:
            try:
                message = self._incoming.get_nowait()
            except queue.Empty:
                return rest
            if message is None:
                return rest
            rest.append(message)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def run_once(
    arguments: list[str],
    *,
    home: Path,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30.0,
) -> subprocess.CompletedProcess[bytes]:
    """Run the stand-in to completion with fixed stdin bytes."""
    return subprocess.run(
        [sys.executable, "-m", "elynav_nb.sandbox.claude.claude_standin", *arguments],
        input=stdin,
        capture_output=True,
        cwd=str(cwd or home),
        env=standin_environment(home, env),
        timeout=timeout,
        check=False,
    )
