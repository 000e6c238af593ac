"""How to start each real ACP agent offline against the fake model API, in a scratch home.

One function per agent, ``(api, workspace, home_dir) -> AcpLaunch``: it writes the config files
the agent needs under ``home_dir`` and returns the argv to spawn, the environment to lay over
``os.environ`` (only what is added or overridden: ``AgentRunner(..., environment=...)`` merges it)
and the ``authenticate`` method id the client must call before ``session/new`` (``None``: none).

- claude-agent-acp: the real claude (the SDK's native binary, or ``CLAUDE_CODE_EXECUTABLE``) on
  ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY``, its config dir in the scratch home.
- codex-acp: codex-core reads ``$CODEX_HOME/config.toml``: a model provider ``elynav`` on
  ``api.openai_base_url`` (Responses API, no retries), its key from ``CODEX_API_KEY``.
- gemini --acp: ``GOOGLE_GEMINI_BASE_URL`` / ``GEMINI_API_KEY``, ``security.auth.selectedType``
  ``gemini-api-key`` in ``$GEMINI_CLI_HOME/.gemini/settings.json``, the workspace trusted by
  ``GEMINI_CLI_TRUST_WORKSPACE=true``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from elynav_nb.agents.protocols.codex.launch import render_toml
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi

REAL_CLI_DIRECTORY = Path(__file__).parent
NODE_MODULES = REAL_CLI_DIRECTORY / "node_modules"
BIN = NODE_MODULES / ".bin"

CLAUDE_ACP_PACKAGE = NODE_MODULES / "@agentclientprotocol" / "claude-agent-acp"
CODEX_ACP_PACKAGE = NODE_MODULES / "@zed-industries" / "codex-acp"
GEMINI_PACKAGE = NODE_MODULES / "@google" / "gemini-cli"

CODEX_MODEL = "gpt-5.5"
GEMINI_MODEL = "gemini-2.5-flash"
CLAUDE_MODEL = "claude-sonnet-4-5"
FAKE_KEY = "sk-fake-acp-key"


@dataclass(frozen=True)
class AcpLaunch:
    """What to spawn for one ACP agent: argv, environment overrides, the auth method to call."""

    agent: str
    argv: tuple[str, ...]
    environment: dict[str, str]
    authenticate_method: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def package_version(package_directory: Path) -> str:
    """The ``version`` of an installed npm package (read from its package.json, no process)."""
    return str(json.loads((package_directory / "package.json").read_text())["version"])


def claude_acp_argv() -> tuple[str, ...]:
    node = shutil.which("node") or "node"
    return (node, str(CLAUDE_ACP_PACKAGE / "dist" / "index.js"))


def codex_acp_argv() -> tuple[str, ...]:
    return (str(BIN / "codex-acp"),)


def gemini_acp_argv() -> tuple[str, ...]:
    return (str(BIN / "gemini"), "--acp")


def _scratch_home(home_dir: Path) -> dict[str, str]:
    home_dir.mkdir(parents=True, exist_ok=True)
    scratch = home_dir / "tmp"
    scratch.mkdir(exist_ok=True)
    return {"HOME": str(home_dir), "TMPDIR": str(scratch)}


def claude_acp_setup(
    api: FakeModelApi, workspace: Path, home_dir: Path, *, claude_executable: str | None = None
) -> AcpLaunch:
    """claude-agent-acp 0.48.0: env only; the claude config dir (settings, sessions) in the scratch home.

    ``claude_executable`` (``CLAUDE_CODE_EXECUTABLE``) runs another claude than the SDK's bundled one.
    """
    config_dir = home_dir / ".claude"
    config_dir.mkdir(parents=True, exist_ok=True)
    # An empty user settings file: the agent reads user/project/local settings (settingSources).
    (config_dir / "settings.json").write_text("{}\n")
    environment = {
        **_scratch_home(home_dir),
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "ANTHROPIC_MODEL": CLAUDE_MODEL,
        "CLAUDE_CODE_MAX_RETRIES": "0",
        # a dropped stream ends the turn: no second, non-streaming request of the same turn
        "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        # The agent passes --allow-dangerously-skip-permissions when not root or IS_SANDBOX is set;
        # the claude binary refuses that flag as root unless IS_SANDBOX is "1" (IS_SANDBOX=yes fails).
        "IS_SANDBOX": "1",
    }
    if claude_executable:
        environment["CLAUDE_CODE_EXECUTABLE"] = claude_executable
    notes = (
        "the SDK's native claude (@anthropic-ai/claude-agent-sdk-linux-x64/claude) runs unless "
        "CLAUDE_CODE_EXECUTABLE names another binary",
        "IS_SANDBOX=1: as root the claude binary exits 1 at session/new otherwise (the bypass flag)",
        "no authenticate: only 'gateway' / 'gateway-bedrock' are implemented (offered when the client "
        "advertises clientCapabilities.auth._meta.gateway); the API key comes from the environment",
    )
    return AcpLaunch("claude-agent-acp", claude_acp_argv(), environment, None, notes)


def write_codex_home(api: FakeModelApi, codex_home: Path, *, model: str = CODEX_MODEL) -> Path:
    """``$CODEX_HOME/config.toml`` with the ``elynav`` provider on the fake API; returns its path."""
    codex_home.mkdir(parents=True, exist_ok=True)
    document = {
        "model": model,
        "model_provider": "elynav",
        "allow_login_shell": False,
        "model_providers": {
            "elynav": {
                "name": "elynav",
                "base_url": api.openai_base_url,
                "wire_api": "responses",
                "env_key": "CODEX_API_KEY",
                "request_max_retries": 0,
                "stream_max_retries": 0,
            }
        },
    }
    path = codex_home / "config.toml"
    path.write_text(render_toml(document))
    return path


def codex_acp_setup(api: FakeModelApi, workspace: Path, home_dir: Path) -> AcpLaunch:
    """codex-acp 0.16.0: a CODEX_HOME with the elynav provider; no authenticate needed (see notes)."""
    codex_home = home_dir / "codex-home"
    write_codex_home(api, codex_home)
    environment = {
        **_scratch_home(home_dir),
        "CODEX_HOME": str(codex_home),
        "CODEX_API_KEY": FAKE_KEY,
    }
    notes = ("config.toml as the codex runner writes it (provider elynav, wire_api responses, retries 0)",)
    return AcpLaunch("codex-acp", codex_acp_argv(), environment, None, notes)


def gemini_acp_setup(api: FakeModelApi, workspace: Path, home_dir: Path) -> AcpLaunch:
    """gemini --acp 0.61.0: settings selectedType gemini-api-key, trusted workspace, pinned model."""
    gemini_home = home_dir / "gemini-home"
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": GEMINI_MODEL},
    }
    settings_path = gemini_home / ".gemini" / "settings.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    settings_path.write_text(json.dumps(settings, indent=2) + "\n")
    environment = {
        **_scratch_home(home_dir),
        "GEMINI_CLI_HOME": str(gemini_home),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GOOGLE_GEMINI_BASE_URL": api.url,
        "GEMINI_API_KEY": FAKE_KEY,
    }
    notes = ("no authenticate: session/new refreshes auth with settings' selectedType and GEMINI_API_KEY",)
    return AcpLaunch("gemini", gemini_acp_argv(), environment, None, notes)


SETUPS: dict[str, Callable[[FakeModelApi, Path, Path], AcpLaunch]] = {
    "claude-agent-acp": claude_acp_setup,
    "codex-acp": codex_acp_setup,
    "gemini": gemini_acp_setup,
}

VERSIONS: dict[str, Path] = {
    "claude-agent-acp": CLAUDE_ACP_PACKAGE,
    "codex-acp": CODEX_ACP_PACKAGE,
    "gemini": GEMINI_PACKAGE,
}
