"""Cell outputs: built from a kernel's iopub messages, bounded, and read as text by people and agents.

Where it sits: the pure output model of ``elynav_nb.notebook`` (no I/O). ``kernel.py`` feeds each
iopub message of one run to an ``OutputCollector``; ``run_display.py`` writes its outputs into the
cell as they come. ``outputs_as_text`` is what ``read_cell`` and ``to_frame`` show.

How data flows::

    iopub message -> OutputCollector.add: stream (merged with the previous one of the same name),
      execute_result, display_data, update_display_data (by display_id), error, clear_output
      (wait=True: cleared at the next output) -> nbformat outputs
    every output's size is bounded (``max_output_bytes``, 1 MiB by default): a bigger stream keeps
      its head and tail and says what was cut; a bigger rich output keeps its text/plain alone, cut
    outputs -> outputs_as_text(max_chars): text/plain, text/markdown, errors as ``Name: value`` with
      the traceback's last lines, an image as ``[image/png, 12.3 KB]``; the cut said at the end
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "OutputCollector", "outputs_as_text", "outputs_summary"]

DEFAULT_MAX_OUTPUT_BYTES: Final = 1024 * 1024
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OUTPUT_MESSAGES: Final = ("stream", "execute_result", "display_data", "error")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))


def _cut_text(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    keep = max(max_bytes // 2 - 100, 0)
    head = encoded[:keep].decode("utf-8", errors="ignore")
    tail = encoded[len(encoded) - keep :].decode("utf-8", errors="ignore")
    return f"{head}\n[... {len(encoded) - 2 * keep:,} bytes cut by elynav (output too large) ...]\n{tail}"


def _bounded(output: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    if _size(output) <= max_bytes:
        return output
    if output.get("output_type") == "stream":
        return {**output, "text": _cut_text(str(output.get("text", "")), max_bytes)}
    if output.get("output_type") == "error":
        traceback = [str(line) for line in output.get("traceback", [])][-20:]
        return {
            **output,
            "evalue": _cut_text(str(output.get("evalue", "")), max_bytes // 2),
            "traceback": traceback,
        }
    data = output.get("data") or {}
    plain = data.get("text/plain", "")
    plain_text = plain if isinstance(plain, str) else "".join(plain)
    kinds = ", ".join(sorted(data))
    bounded = dict(output)
    bounded["data"] = {
        "text/plain": _cut_text(plain_text, max_bytes // 2)
        + f"\n[elynav: this output ({kinds}) was {_size(output):,} bytes; only its text is kept]"
    }
    bounded["metadata"] = {}
    return bounded


class OutputCollector:
    """The outputs of one run, as a Jupyter frontend builds them from iopub messages."""

    def __init__(self, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.execution_count: int | None = None
        self.max_output_bytes = max_output_bytes
        self._clear_on_next = False

    def add(self, message_type: str, content: dict[str, Any]) -> bool:
        """Take one iopub message; True when the outputs changed."""
        if message_type == "execute_input":
            count = content.get("execution_count")
            self.execution_count = count if isinstance(count, int) else self.execution_count
            return False
        if message_type == "clear_output":
            if content.get("wait"):
                self._clear_on_next = True
                return False
            self.outputs = []
            return True
        if message_type == "update_display_data":
            return self._update_display(content)
        if message_type not in _OUTPUT_MESSAGES:
            return False
        if self._clear_on_next:
            self.outputs = []
            self._clear_on_next = False
        output = self._output(message_type, content)
        if output["output_type"] == "stream" and self.outputs:
            last = self.outputs[-1]
            if last.get("output_type") == "stream" and last.get("name") == output["name"]:
                merged = {**last, "text": str(last.get("text", "")) + output["text"]}
                self.outputs[-1] = _bounded(merged, self.max_output_bytes)
                return True
        self.outputs.append(_bounded(output, self.max_output_bytes))
        return True

    def _output(self, message_type: str, content: dict[str, Any]) -> dict[str, Any]:
        if message_type == "stream":
            return {
                "output_type": "stream",
                "name": str(content.get("name", "stdout")),
                "text": str(content.get("text", "")),
            }
        if message_type == "error":
            return {
                "output_type": "error",
                "ename": str(content.get("ename", "")),
                "evalue": str(content.get("evalue", "")),
                "traceback": [str(line) for line in content.get("traceback", [])],
            }
        output: dict[str, Any] = {
            "output_type": message_type,
            "data": dict(content.get("data") or {}),
            "metadata": dict(content.get("metadata") or {}),
        }
        if message_type == "execute_result":
            count = content.get("execution_count")
            output["execution_count"] = count if isinstance(count, int) else self.execution_count
        display_id = (content.get("transient") or {}).get("display_id")
        if display_id:
            output["_display_id"] = display_id  # stripped before the cell is written
        return output

    def _update_display(self, content: dict[str, Any]) -> bool:
        display_id = (content.get("transient") or {}).get("display_id")
        changed = False
        for index, output in enumerate(self.outputs):
            if display_id and output.get("_display_id") == display_id:
                updated = {
                    **output,
                    "data": dict(content.get("data") or {}),
                    "metadata": dict(content.get("metadata") or {}),
                }
                self.outputs[index] = _bounded(updated, self.max_output_bytes)
                changed = True
        return changed

    def notebook_outputs(self) -> list[dict[str, Any]]:
        """The outputs as nbformat stores them (no private keys)."""
        return [
            {key: value for key, value in output.items() if not key.startswith("_")}
            for output in self.outputs
        ]


def _joined(value: Any) -> str:
    return value if isinstance(value, str) else "".join(str(part) for part in value or [])


def _one_output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text", ""))
    if kind == "error":
        traceback = [_ANSI.sub("", str(line)) for line in output.get("traceback", [])][-3:]
        head = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return "\n".join([head, *traceback]) if traceback else head
    data = output.get("data") or {}
    parts: list[str] = []
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            parts.append(_joined(data[mime]))
            break
    for mime, value in data.items():
        if (
            mime.startswith("image/")
            or mime in ("text/html", "application/pdf")
            or mime.startswith("application/vnd")
        ):
            if mime == "text/html" and parts:
                continue
            parts.append(f"[{mime}, {len(_joined(value)) / 1024:.1f} KB]")
    return "\n".join(parts)


def outputs_as_text(outputs: list[dict[str, Any]], max_chars: int = 4000) -> str:
    """The outputs as plain text for a reader; a longer text is cut and says how much was left out."""
    text = "\n".join(_ANSI.sub("", _one_output_text(output)) for output in outputs).strip("\n")
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n[... {len(text) - max_chars:,} more characters not shown]"


def outputs_summary(outputs: list[dict[str, Any]]) -> str:
    """One short line: ``stream, execute_result (text/plain)``."""
    kinds: list[str] = []
    for output in outputs:
        kind = str(output.get("output_type", "?"))
        if kind in ("execute_result", "display_data"):
            kind += f" ({', '.join(sorted((output.get('data') or {}).keys()))})"
        elif kind == "error":
            kind += f" ({output.get('ename', '')})"
        kinds.append(kind)
    return ", ".join(kinds)
