"""Real Node peers for the interop tier: installs ``tests/interop/node_modules`` once, runs scripts.

``npm ci`` runs on first use only; a stamp holding the sha256 of ``package-lock.json`` makes the next
runs instant. Without ``node``/``npm`` (or when the install fails, e.g. offline) the tests are skipped
with the reason, except under ``ELYNAV_REQUIRE_NODE=1`` (set by ``.ci/run``), where they fail.
Scripts in ``node/`` read one JSON document on stdin and print one on stdout.

Live peers: ``hocuspocus_server`` runs ``node/hocuspocus_server.mjs`` (Hocuspocus 3.4.4 behind the Docs
y-provider checks) on a free loopback port; ``ProviderPeer`` drives one ``@hocuspocus/provider`` client
(``node/provider_peer.mjs``) with JSON-line commands; ``hocuspocus4_installed`` installs the separate
``hocuspocus4/`` folder (a plain ``@hocuspocus/server`` 4.x, its own lock file) for the forward run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import tiers

INTEROP_DIRECTORY = Path(__file__).parent
INSTALL_TIMEOUT_SECONDS = 600
SCRIPT_TIMEOUT_SECONDS = 120

NodeRunner = Callable[[str, dict[str, Any]], dict[str, Any]]


def _skip_or_fail(reason: str) -> None:
    """Skip with the reason, except where ELYNAV_REQUIRE_NODE=1 (CI): there a missing peer fails."""
    tiers.skip_or_fail("ELYNAV_REQUIRE_NODE", reason)


def _lock_hash(directory: Path = INTEROP_DIRECTORY) -> str:
    return hashlib.sha256((directory / "package-lock.json").read_bytes()).hexdigest()


def _ensure_node_modules(directory: Path = INTEROP_DIRECTORY) -> None:
    if shutil.which("node") is None:
        _skip_or_fail("node is not installed: the interop tier needs Node >= 20")
    npm = shutil.which("npm")
    if npm is None:
        _skip_or_fail("npm is not installed: the interop tier needs it to install the pinned peers")
    wanted = _lock_hash(directory)
    stamp_file = directory / "node_modules" / ".elynav-lock-sha256"
    if stamp_file.exists() and stamp_file.read_text().strip() == wanted:
        return
    try:
        completed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _skip_or_fail(f"npm ci did not finish within {INSTALL_TIMEOUT_SECONDS} s")
    if completed.returncode != 0:
        _skip_or_fail(f"npm ci failed (offline?): {completed.stderr.strip()[-500:]}")
    stamp_file.write_text(wanted)


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
            check=False,
        )
        if completed.returncode != 0:
            raise AssertionError(f"node {script} failed:\n{completed.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(completed.stdout)
        return result

    return run


# --- live peers: the Docs-like Hocuspocus server and @hocuspocus/provider clients ---------------

ALLOWED_ORIGIN = "http://localhost:3000"


class NodeServer:
    """A long-running Node server script; ``port`` is read from its first line of output."""

    def __init__(self, script: str, config: dict[str, Any], *, directory: Path | None = None) -> None:
        script_path = (directory or INTEROP_DIRECTORY / "node") / script
        self.process = subprocess.Popen(
            ["node", str(script_path), json.dumps(config)],
            cwd=script_path.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        first_line = self.process.stdout.readline()
        if not first_line:
            self.stop()
            raise AssertionError(f"node {script} exited before listening")
        self.port: int = json.loads(first_line)["port"]
        self.http_url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/collaboration/ws/"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


HOCUSPOCUS4_DIRECTORY = INTEROP_DIRECTORY / "hocuspocus4"


@pytest.fixture(scope="session")
def hocuspocus4_installed() -> Path:
    """``tests/interop/hocuspocus4`` with its own pinned ``@hocuspocus/server`` 4.x installed."""
    _ensure_node_modules()
    _ensure_node_modules(HOCUSPOCUS4_DIRECTORY)
    return HOCUSPOCUS4_DIRECTORY


@pytest.fixture(scope="session")
def hocuspocus_server(node_peer: NodeRunner) -> Any:
    """The Docs-like server (Hocuspocus 3.4.4 + y-provider checks) on a free loopback port."""
    server = NodeServer("hocuspocus_server.mjs", {"allowed_origins": [ALLOWED_ORIGIN]})
    yield server
    server.stop()


class ProviderPeer:
    """One ``@hocuspocus/provider`` client in a Node process, driven by JSON-line commands."""

    def __init__(self, process: Any) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> ProviderPeer:
        import asyncio

        process = await asyncio.create_subprocess_exec(
            "node",
            str(INTEROP_DIRECTORY / "node" / "provider_peer.mjs"),
            cwd=INTEROP_DIRECTORY,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    async def call(self, op: str, timeout: float = 60.0, **arguments: Any) -> dict[str, Any]:
        import asyncio

        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps({"op": op, **arguments}) + "\n").encode())
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            raise AssertionError(f"provider peer exited during {op!r}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def stop(self) -> None:
        import asyncio

        if self.process.returncode is None:
            try:
                await self.call("quit", timeout=5)
            except (AssertionError, TimeoutError, BrokenPipeError, ConnectionResetError):
                pass
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


# --- a real OpenID Connect provider (panva/node-oidc-provider) for the Docs sign-in tests -------

OIDC_DIRECTORY = INTEROP_DIRECTORY / "oidc"


@pytest.fixture(scope="session")
def oidc_installed() -> Path:
    """``tests/interop/oidc`` with its own pinned ``oidc-provider`` installed."""
    _ensure_node_modules()
    _ensure_node_modules(OIDC_DIRECTORY)
    return OIDC_DIRECTORY


@pytest.fixture
def oidc_provider(oidc_installed: Path, request: pytest.FixtureRequest) -> Any:
    """A fresh provider per test (its tokens and sessions live in its memory): ``.issuer``.
    ``@pytest.mark.access_token_ttl(seconds)`` shortens its access tokens' life."""
    marker = request.node.get_closest_marker("access_token_ttl")
    config: dict[str, Any] = {"clients": {}}
    if marker is not None:
        config["access_token_ttl"] = marker.args[0]
    server = NodeServer("provider.mjs", config, directory=oidc_installed)
    server.issuer = server.http_url  # type: ignore[attr-defined]
    yield server
    server.stop()
