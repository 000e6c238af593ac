"""One redaction path for what leaves the kernel towards a model: tool errors, hook reasons, HookFailed, magic fields.

The same secrets go through each path and none comes out; end to end on the claude stand-in, a
hook's exception reaches neither what the CLI read (the tool result it built from our answer) nor
the turn's frame.
"""

from __future__ import annotations

import pytest

from elynav_nb.agents import AgentRunner, HookDenied, HookFailed, ToolResult
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.hooks import HookCall, deny, normalise_hooks
from elynav_nb.agents.hooks.runner import HookRunner
from elynav_nb.agents.tools.outcome import exception_outcome
from elynav_nb.magics.interpolation import interpolate

pytestmark = pytest.mark.anyio

ENVIRONMENT_SECRET = "kernel-env-secret-4f9a2c"
SECRETS = [ENVIRONMENT_SECRET, "hunter2-pass-77", "ghp_" + "a1B2c3D4" * 4]
SECRET_TEXT = f"cannot log in with {ENVIRONMENT_SECRET}, password=hunter2-pass-77 and the token {SECRETS[2]} for the API"
FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


@pytest.fixture(autouse=True)
def a_secret_in_the_kernel_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REDACTION_TEST_SERVICE_API_KEY", ENVIRONMENT_SECRET)
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, text
    assert "[redacted]" in text, text


CALL = HookCall("PreToolUse", "Bash", {"command": "ls"}, "toolu_1", "s1")


def _tool_error() -> list[str]:
    outcome = exception_outcome("lookup", ValueError(SECRET_TEXT))
    return [outcome.content, str(outcome.structured)]


async def _hook_deny_reason() -> list[str]:
    reported: list[object] = []
    runner = HookRunner(
        normalise_hooks({"PreToolUse": lambda call: deny(SECRET_TEXT)}), report=reported.append
    )
    decision = await runner.run(CALL)
    assert decision is not None and decision.denied
    [denied] = reported
    assert isinstance(denied, HookDenied)
    return [decision.reason, denied.reason, denied.summary()]


async def _hook_failed() -> list[str]:
    def broken(call: HookCall) -> None:
        raise RuntimeError(SECRET_TEXT)

    reported: list[object] = []
    runner = HookRunner(normalise_hooks({"PreToolUse": broken}), report=reported.append)
    decision = await runner.run(CALL)
    assert decision is not None and decision.denied
    [failed] = reported
    assert isinstance(failed, HookFailed)
    return [decision.reason, failed.message, failed.summary()]


def _magic_field() -> list[str]:
    return [interpolate("Why did this fail? {error}", {"error": SECRET_TEXT})]


@pytest.mark.parametrize("path", ["tool error", "hook deny reason", "HookFailed", "magic field"])
async def test_every_path_towards_a_model_redacts_the_same_secrets(path):
    if path == "tool error":
        texts = _tool_error()
    elif path == "hook deny reason":
        texts = await _hook_deny_reason()
    elif path == "HookFailed":
        texts = await _hook_failed()
    else:
        texts = _magic_field()
    for text in texts:
        assert_no_secret(text)
        assert "cannot log in with" in text  # the rest of the message is kept


async def test_a_secret_in_a_hooks_exception_reaches_neither_the_cli_nor_the_frame(tmp_path):
    def leaky(call: HookCall) -> None:
        raise ValueError(SECRET_TEXT)

    runner = AgentRunner(
        None,
        tmp_path,
        executable="standin",
        stop_bounds=FAST_STOP,
        permission_mode="acceptEdits",
        hooks={"PreToolUse": leaky},
    )
    async with runner:
        result = await runner.send("@standin bash echo never")
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert tool_result.is_error and "ValueError" in tool_result.text  # the CLI's text, from our answer
    assert_no_secret(tool_result.text)
    assert_no_secret(failed.message)
    frame = result.to_frame().to_string()
    assert "hook_failed" in frame
    for secret in SECRETS:
        assert secret not in frame
