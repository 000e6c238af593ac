"""Set-up for the real ACP agents driven through ``AgentRunner(cli="acp")`` (``test_acp_real.py``).

``make_acp_runner`` lays ``acp_setups``' launch of one agent (argv, environment on the fake model API,
config files in a scratch home) under an ``AgentRunner(None, workspace, cli="acp", executable=argv)``.
``shell_reply`` scripts the shell call each agent asks permission for (codex-acp only asks for a
command the model marks ``sandbox_permissions: "require_escalated"``). ``agent_requests`` picks the
model requests of the agent's own API from ``FakeModelApi.requests``; ``run_answering`` runs one turn,
answering each permission prompt with a given callback; ``session_saved`` says whether the agent has
written a session's file (claude writes its transcript after it answers the turn).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from elynav_nb.agents import AgentRunner, PermissionRequest
from elynav_nb.agents.results import TurnResult
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import NativeToolCall, Reply

from .acp_setups import SETUPS
from .conftest import RealCli

TURN_TIMEOUT = 120.0
API_STYLE = {"claude-agent-acp": "anthropic", "codex-acp": "openai", "gemini": "gemini"}


def make_acp_runner(
    agent: RealCli, api: FakeModelApi, workspace: Path, home: Path, **options: Any
) -> AgentRunner:
    """A runner of the ACP ``agent`` on the fake API (options go to ``AgentRunner``)."""
    launch = SETUPS[agent.name](api, workspace, home)
    options.setdefault("turn_timeout", TURN_TIMEOUT)
    return AgentRunner(
        None,
        workspace,
        cli="acp",
        executable=list(launch.argv),
        environment={**launch.environment, **options.pop("environment", {})},
        **options,
    )


def shell_reply(agent: RealCli, command: str, text: str = "") -> Reply:
    """A shell call the agent asks permission for: codex-acp's escalated ``exec_command``, else ``Reply.shell``."""
    if agent.name == "codex-acp":
        arguments = {
            "cmd": command,
            "sandbox_permissions": "require_escalated",
            "justification": "the test asks for it",
        }
        return Reply(text=(text,) if text else (), tool_calls=(NativeToolCall("exec_command", arguments),))
    return Reply.shell(command, text=text)


def agent_requests(api: FakeModelApi, agent: RealCli) -> list[Any]:
    """The model requests the agent sent on its own API (claude: Anthropic, codex: OpenAI, gemini)."""
    return api.model_requests(API_STYLE[agent.name])


async def run_answering(
    runner: AgentRunner, prompt: str, answer: Callable[[PermissionRequest], None]
) -> tuple[TurnResult, list[PermissionRequest]]:
    """One turn; each ``PermissionRequest`` read from it is answered by ``answer``."""
    asked: list[PermissionRequest] = []
    turn = runner.send(prompt)
    async for event in turn:
        if isinstance(event, PermissionRequest):
            asked.append(event)
            answer(event)
    return await turn, asked


def session_saved(home: Path, session_id: str, text: str) -> bool:
    """Whether a session file of ``session_id`` under the agent's home holds ``text`` (claude's
    ``projects/<cwd>/<id>.jsonl``, codex's ``sessions/.../rollout-...-<id>.jsonl``)."""
    for path in home.rglob(f"*{session_id}*.jsonl"):
        try:
            if text in path.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False
