"""A real IPython kernel for tests (jupyter_client): cells sent one by one, as JupyterLab sends them."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

jupyter_manager = pytest.importorskip("jupyter_client.manager")

__all__ = ["Kernel"]


class Kernel:
    """A fresh python3 kernel; ``run`` sends one cell and returns its stdout lines and its errors."""

    def __init__(self) -> None:
        self.manager, self.client = jupyter_manager.start_new_kernel(kernel_name="python3")
        self.tracebacks: list[list[str]] = []  # the last cell's error tracebacks, as the frontend shows them

    def run(self, code: str, *, timeout: float = 90) -> tuple[list[str], list[str]]:
        """Run one cell; its stdout lines and its errors (``Name: message``)."""
        lines: list[str] = []
        errors: list[str] = []
        self.tracebacks = []

        def collect(message: dict[str, Any]) -> None:
            content = message["content"]
            if message["msg_type"] == "stream" and content["name"] == "stdout":
                lines.extend(content["text"].splitlines())
            elif message["msg_type"] == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")
                self.tracebacks.append(list(content["traceback"]))

        self.client.execute_interactive(textwrap.dedent(code), timeout=timeout, output_hook=collect)
        return lines, errors

    def shutdown(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
