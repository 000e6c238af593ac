"""Shared pytest set-up: async tests run on asyncio through anyio's pytest plugin.

A test run started as a background job (``pytest &`` in a script, as CI harnesses do) ignores SIGINT,
and every process a test spawns would inherit that: a CLI told to stop with SIGINT would not. The
run puts the default SIGINT handling back first, so children start with the disposition a terminal
gives them (a Python handler is reset to the default in a child; an ignored signal is not).

Tiers: a test marked ``needs(variable, missing)`` (``tests/tiers.py``) skips when ``missing`` names
what it lacks here, and fails instead where ``variable`` is set to 1 (``.ci/run`` sets those).
"""

from __future__ import annotations

import signal

import pytest

from tests import tiers

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("needs"):
        variable, missing = marker.args
        if missing is not None:
            tiers.skip_or_fail(variable, missing)
