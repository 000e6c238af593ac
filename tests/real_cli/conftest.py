"""The real-binary tier: the pinned codex and gemini CLIs (and the real claude) against the fake model API.

``tests/real_cli/package.json`` + ``package-lock.json`` pin ``@openai/codex``,
``@google/gemini-cli`` and the ACP agents ``@agentclientprotocol/claude-agent-acp`` (the real claude
of ``@anthropic-ai/claude-agent-sdk-linux-x64`` underneath) and ``@zed-industries/codex-acp`` (a
native binary); ``claude_acp_agent`` / ``codex_acp_agent`` / ``gemini_acp_agent`` start them as ACP
agents (``acp_setups`` points them at the fake API); ``npm ci`` installs them on first use (a stamp holding the lock file's
sha256 makes later runs instant). The real claude comes from ``ELYNAV_CLAUDE_BIN`` (``.ci/run``
points it at the binary bundled in the claude-agent-sdk wheel) or ``claude`` on PATH.

A missing CLI skips its tests with the reason, except under ``ELYNAV_REQUIRE_REAL_CLI=1``, where
it fails. Every test runs offline: each CLI talks to ``elynav_nb.sandbox.model_api.fake_model_api`` on
loopback, in a temporary home. The version each test ran is recorded as a test property
(``cli_version``) and printed in the test's report section.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import tiers

REAL_CLI_DIRECTORY = Path(__file__).parent
INSTALL_TIMEOUT_SECONDS = 900
VERSION_TIMEOUT_SECONDS = 60
BIN = REAL_CLI_DIRECTORY / "node_modules" / ".bin"


def skip_or_fail(reason: str) -> None:
    """Skip with the reason, except where ELYNAV_REQUIRE_REAL_CLI=1 (CI): there a missing CLI fails."""
    tiers.skip_or_fail("ELYNAV_REQUIRE_REAL_CLI", reason)


@dataclass(frozen=True)
class RealCli:
    """One installed CLI: the words that start it and the version it reports."""

    name: str
    argv: tuple[str, ...]
    version: str
    mode: str = ""  # the runner's cli_mode ("" for the CLI's default)

    @property
    def persistent(self) -> bool:
        """Whether the runner keeps one process across turns (codex app-server)."""
        return self.name == "codex" and self.mode != "exec"


def _ensure_node_modules() -> None:
    if shutil.which("node") is None:
        skip_or_fail("node is not installed: codex and gemini are installed from npm (Node >= 20)")
    npm = shutil.which("npm")
    if npm is None:
        skip_or_fail("npm is not installed: it installs the pinned codex and gemini CLIs")
    wanted = hashlib.sha256((REAL_CLI_DIRECTORY / "package-lock.json").read_bytes()).hexdigest()
    stamp_file = REAL_CLI_DIRECTORY / "node_modules" / ".elynav-lock-sha256"
    if stamp_file.exists() and stamp_file.read_text().strip() == wanted:
        return
    try:
        completed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=REAL_CLI_DIRECTORY,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        skip_or_fail(f"npm ci did not finish within {INSTALL_TIMEOUT_SECONDS} s")
    if completed.returncode != 0:
        skip_or_fail(f"npm ci failed (offline?): {completed.stderr.strip()[-500:]}")
    stamp_file.write_text(wanted)


def _version_of(name: str, argv: tuple[str, ...]) -> str:
    try:
        completed = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        skip_or_fail(f"{name} --version failed: {error}")
    if completed.returncode != 0:
        skip_or_fail(f"{name} --version exited {completed.returncode}: {completed.stderr.strip()[-300:]}")
    words = completed.stdout.strip().split()
    return words[-1] if name == "codex" else words[0]


@pytest.fixture(scope="session")
def codex_cli() -> RealCli:
    """The pinned ``codex`` (npm ``@openai/codex``)."""
    _ensure_node_modules()
    argv = (str(BIN / "codex"),)
    return RealCli("codex", argv, _version_of("codex", argv))


@pytest.fixture(scope="session")
def gemini_cli() -> RealCli:
    """The pinned ``gemini`` (npm ``@google/gemini-cli``)."""
    _ensure_node_modules()
    argv = (str(BIN / "gemini"),)
    return RealCli("gemini", argv, _version_of("gemini", argv))


def _acp_agent(name: str) -> RealCli:
    from .acp_setups import (
        SETUPS,
        VERSIONS,
        claude_acp_argv,
        codex_acp_argv,
        gemini_acp_argv,
        package_version,
    )

    _ensure_node_modules()
    argv = {"claude-agent-acp": claude_acp_argv, "codex-acp": codex_acp_argv, "gemini": gemini_acp_argv}[
        name
    ]()
    package = VERSIONS[name]
    if name not in SETUPS or not (package / "package.json").exists():
        skip_or_fail(f"the ACP agent {name} is not installed under {package}")
    return RealCli(name, argv, package_version(package), mode="acp")


@pytest.fixture(scope="session")
def claude_acp_agent() -> RealCli:
    """The pinned ``claude-agent-acp`` (``node .../dist/index.js``), version from its package.json."""
    return _acp_agent("claude-agent-acp")


@pytest.fixture(scope="session")
def codex_acp_agent() -> RealCli:
    """The pinned ``codex-acp`` (``.bin/codex-acp``), version from its package.json."""
    return _acp_agent("codex-acp")


@pytest.fixture(scope="session")
def gemini_acp_agent() -> RealCli:
    """The pinned gemini as an ACP agent (``.bin/gemini --acp``), version from its package.json."""
    return _acp_agent("gemini")


@pytest.fixture(scope="session")
def claude_cli() -> RealCli:
    """The real ``claude`` (``ELYNAV_CLAUDE_BIN`` or PATH)."""
    binary = os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")
    if binary is None:
        skip_or_fail("the claude CLI is not installed (set ELYNAV_CLAUDE_BIN)")
    assert binary is not None
    argv = (binary,)
    return RealCli("claude", argv, _version_of("claude", argv))


@pytest.fixture(params=["codex", "codex-exec", "gemini"])
def per_turn_cli(request: pytest.FixtureRequest) -> RealCli:
    """The pinned codex over app-server, codex over ``exec`` (a process per turn), then gemini."""
    name, _, mode = str(request.param).partition("-")
    cli: RealCli = request.getfixturevalue(f"{name}_cli")
    return dataclasses.replace(cli, mode=mode)


@pytest.fixture
def says_version(record_property: Callable[[str, object], None]) -> Callable[[RealCli], None]:
    """``says_version(cli)``: the test records (junit property) and prints which CLI version it ran."""

    def say(cli: RealCli) -> None:
        record_property("cli_version", f"{cli.name} {cli.version}")
        print(f"ran {cli.name} {cli.version}")

    return say


@pytest.fixture(autouse=True)
def cli_homes_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The config homes the runners make for codex and gemini, inside the test's scratch folder."""
    root = tmp_path / "cli-homes"
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(root))
    return root


@pytest.fixture
def isolated_home(tmp_path: Path) -> dict[str, str]:
    """A scratch HOME and TMPDIR for a CLI (its shell does not source the real profile)."""
    home = tmp_path / "home"
    scratch = tmp_path / "tmp"
    home.mkdir()
    scratch.mkdir()
    return {"HOME": str(home), "TMPDIR": str(scratch)}
