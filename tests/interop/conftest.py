"""Real Node peers for the interop tier: installs ``tests/interop/node_modules`` once, runs scripts.

``npm ci`` runs on first use only; a stamp holding the sha256 of ``package-lock.json`` makes the next
runs instant. Without ``node``/``npm`` (or when the install fails, e.g. offline) the tests are skipped
with the reason, except under ``ELYNAV_REQUIRE_NODE=1`` (set by ``.ci/run``), where they fail.
Scripts in ``node/`` read one JSON document on stdin and print one on stdout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

INTEROP_DIRECTORY = Path(__file__).parent
LOCK_FILE = INTEROP_DIRECTORY / "package-lock.json"
STAMP_FILE = INTEROP_DIRECTORY / "node_modules" / ".elynav-lock-sha256"
INSTALL_TIMEOUT_SECONDS = 600
SCRIPT_TIMEOUT_SECONDS = 120

NodeRunner = Callable[[str, dict[str, Any]], dict[str, Any]]


def _skip_or_fail(reason: str) -> None:
    """Skip with the reason, except where ELYNAV_REQUIRE_NODE=1 (CI): there a missing peer fails."""
    if os.environ.get("ELYNAV_REQUIRE_NODE") == "1":
        pytest.fail(f"interop peers are required here (ELYNAV_REQUIRE_NODE=1): {reason}")
    pytest.skip(reason)


def _lock_hash() -> str:
    return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()


def _ensure_node_modules() -> None:
    if shutil.which("node") is None:
        _skip_or_fail("node is not installed: the interop tier needs Node >= 20")
    npm = shutil.which("npm")
    if npm is None:
        _skip_or_fail("npm is not installed: the interop tier needs it to install the pinned peers")
    wanted = _lock_hash()
    if STAMP_FILE.exists() and STAMP_FILE.read_text().strip() == wanted:
        return
    try:
        completed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=INTEROP_DIRECTORY,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        _skip_or_fail(f"npm ci did not finish within {INSTALL_TIMEOUT_SECONDS} s")
    if completed.returncode != 0:
        _skip_or_fail(f"npm ci failed (offline?): {completed.stderr.strip()[-500:]}")
    STAMP_FILE.write_text(wanted)


@pytest.fixture(scope="session")
def node_peer() -> NodeRunner:
    """``node_peer("oracle.mjs", {...}) -> dict``: run a script of ``tests/interop/node``."""
    _ensure_node_modules()

    def run(script: str, payload: dict[str, Any]) -> dict[str, Any]:
        completed = subprocess.run(
            ["node", str(INTEROP_DIRECTORY / "node" / script)],
            cwd=INTEROP_DIRECTORY,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT_SECONDS,
        )
        if completed.returncode != 0:
            raise AssertionError(f"node {script} failed:\n{completed.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(completed.stdout)
        return result

    return run
