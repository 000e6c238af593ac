"""Shared pytest set-up: async tests run on asyncio through anyio's pytest plugin.

A test run started as a background job (``pytest &`` in a script, as CI harnesses do) ignores SIGINT,
and every process a test spawns would inherit that: a CLI told to stop with SIGINT would not. The
run puts the default SIGINT handling back first, so children start with the disposition a terminal
gives them (a Python handler is reset to the default in a child; an ignored signal is not).
"""

from __future__ import annotations

import signal

import pytest

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
