"""The test tiers that need more than the README's ``pip install -e '.[test]'``: skip, or fail where required.

A new user runs the README's test command in a venv that has the test extra alone: a test that needs
Node, a real CLI, the browser extra or the lab extra skips there with its reason. ``.ci/run`` sets the
matching ``ELYNAV_REQUIRE_*`` variable where it has installed that part, so the same test must run
there instead of skipping (a test put in the wrong tier then fails CI, not a new user).

| variable | the tier |
|---|---|
| ``ELYNAV_REQUIRE_NODE`` | ``tests/interop``: the pinned Node peers (``npm ci`` on first use) |
| ``ELYNAV_REQUIRE_REAL_CLI`` | ``tests/real_cli`` and ``real_cli`` tests: claude, codex and gemini |
| ``ELYNAV_REQUIRE_BROWSER`` | ``tests/browser``: JupyterLab in headless Chromium (``.[test,browser]``) |
| ``ELYNAV_REQUIRE_LAB`` | tests marked ``lab``: JupyterLab itself (``.[test,lab]``) |
| ``ELYNAV_REQUIRE_CHAT`` | ``tests/browser/test_chat_in_browser.py``: JupyterLab's chat with the office's personas (``.[test,browser,chat]``, in the venv ``$ELYNAV_CHAT_VENV``) |
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["is_required", "needs", "skip_or_fail"]


def is_required(variable: str) -> bool:
    """Whether this run must run the tier ``variable`` names (``.ci/run`` sets it to 1)."""
    return os.environ.get(variable) == "1"


def skip_or_fail(variable: str, reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead where ``variable`` is set to 1."""
    if is_required(variable):
        pytest.fail(f"{variable}=1 is set but this tier cannot run here: {reason}")
    pytest.skip(reason)


def needs(variable: str, missing: str | None) -> pytest.MarkDecorator:
    """A mark for tests of the tier ``variable``: ``missing`` says what is missing here (``None``: nothing).

    ``tests/conftest.py`` reads it before each test: a test whose tier misses something skips with
    that reason, or fails where the tier is required.
    """
    return pytest.mark.needs(variable, missing)
