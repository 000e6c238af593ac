"""The stand-in's tools: the permission policy (pure) and the Bash tool runner (a real subprocess).

Where it sits: called by ``tool_calls`` for each scripted tool use. ``decide_permission`` mirrors the
real CLI's rules closely enough for tests: read-only shell commands run in every mode but ``plan``;
``--allowedTools`` rules and the ``acceptEdits``/``auto``/``bypassPermissions`` modes allow; in
``default`` (``manual``) mode anything else is asked over stdio when ``--permission-prompt-tool stdio``
is given, otherwise denied; ``dontAsk`` and ``plan`` deny. MCP tools are never "read-only": they need a
rule, ``bypassPermissions`` or an answer from the host (observed on 2.1.332).

``BashTool`` runs ``bash -c`` in its **own session** (``start_new_session=True``), stdout and stderr
merged, exactly like the real Bash tool, so killing the stand-in's process group does not reach it.

Data flow: tool input -> ``decide_permission`` -> (host answer) -> ``BashTool.run`` -> ``BashOutcome``
-> tool_result content built by ``bash_result_content``.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BashOutcome",
    "BashTool",
    "PermissionDecision",
    "bash_result_content",
    "decide_permission",
    "is_read_only_command",
    "shell_subcommands",
    "split_rules",
]

READ_ONLY_COMMANDS = frozenset(
    {
        "echo", "ls", "cat", "pwd", "true", "false", "head", "tail", "wc", "grep", "date", "whoami", "id",
        "printf", "sleep", "env", "uname", "which", "test", "seq", "sort", "uniq", "cut", "tr", "basename",
        "dirname", "stat", "ps", "hostname", "realpath", "readlink", "du", "df", "nproc", "[",
    }
)  # fmt: skip

_COMMAND_SEPARATORS = re.compile(r"&&|\|\||;|\||\n")
_HARMLESS_REDIRECTIONS = re.compile(
    r"\d*>&\d+|\d*>>?\s*/dev/null"
)  # to a descriptor or /dev/null: writes no file


def is_read_only_command(command: str) -> bool:
    """True when every simple command is on the read-only list and nothing is redirected into a file."""
    harmless = _HARMLESS_REDIRECTIONS.sub(" ", command)
    if ">" in harmless or "`" in harmless or "$(" in harmless:
        return False
    pieces = _COMMAND_SEPARATORS.split(harmless)
    saw_command = False
    for piece in pieces:
        words = piece.strip().split()
        if not words:
            continue
        saw_command = True
        if words[0] not in READ_ONLY_COMMANDS:
            return False
    return saw_command


def split_rules(text: str, separators: str) -> list[str]:
    """Split a rule list on ``separators`` outside parentheses: ``Bash(elynav ask:*), Read`` -> 2 rules."""
    rules: list[str] = []
    current = ""
    depth = 0
    for character in text:
        if character == "(":
            depth += 1
        elif character == ")" and depth > 0:
            depth -= 1
        if character in separators and depth == 0:
            rules.append(current)
            current = ""
        else:
            current += character
    rules.append(current)
    return [rule.strip() for rule in rules if rule.strip()]


@dataclass(frozen=True)
class PermissionDecision:
    """``behavior`` is ``allow``, ``ask`` or ``deny``; ``reason_type`` feeds ``tool_result_meta``."""

    behavior: str
    reason_type: str
    message: str = ""


def _rule_matches(rule: str, tool_name: str, command: str | None) -> bool:
    """``Bash``, ``Bash(git status)``, ``Bash(git *)``, ``Bash(git:*)``, ``mcp__server``, ``mcp__server__*``."""
    rule = rule.strip()
    if rule == tool_name:
        return True
    if tool_name.startswith("mcp__"):
        server_prefix = "__".join(tool_name.split("__")[:2])
        return rule in (server_prefix, server_prefix + "__*")
    if command is None or not rule.startswith(tool_name + "(") or not rule.endswith(")"):
        return False
    pattern = rule[len(tool_name) + 1 : -1]
    if pattern.endswith(":*"):
        return command.startswith(pattern[:-2])
    if pattern.endswith("*"):
        return command.startswith(pattern[:-1])
    return command == pattern


def shell_subcommands(command: str) -> list[str] | None:
    """The simple commands of a compound shell command (split on ``; & | && ||`` and newlines outside
    quotes), or ``None`` when its quotes do not balance."""
    lexer = shlex.shlex(command, posix=False, punctuation_chars=";&|\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    pieces: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and set(token) <= set(";&|\n"):
                pieces.append([])
            else:
                pieces[-1].append(token)
    except ValueError:
        return None
    return [" ".join(words) for words in pieces if words]


def _rule_allows(rule: str, tool_name: str, command: str | None) -> bool:
    """A rule allows a Bash command only when it allows each of its simple commands (read-only ones pass),
    as the real CLI does: ``Bash(elynav ask:*)`` does not allow ``elynav ask x y; rm -rf z``."""
    if tool_name != "Bash" or command is None or rule.strip() == "Bash":
        return _rule_matches(rule, tool_name, command)
    subcommands = shell_subcommands(command)
    if not subcommands:
        return False
    matched = False
    for subcommand in subcommands:
        if _rule_matches(rule, tool_name, subcommand):
            matched = True
        elif not is_read_only_command(subcommand):
            return False
    return matched


def decide_permission(
    tool_name: str,
    command: str | None,
    *,
    permission_mode: str,
    allowed_rules: list[str],
    disallowed_rules: list[str],
    prompt_over_stdio: bool,
) -> PermissionDecision:
    """The decision for one tool use; ``command`` is the Bash command (None for other tools)."""
    denial = f"Claude requested permissions to use {tool_name}, but you haven't granted it yet."
    for rule in disallowed_rules:
        if _rule_matches(rule, tool_name, command):
            return PermissionDecision("deny", "rule", f"Permission to use {tool_name} has been denied.")
    if permission_mode == "bypassPermissions":
        return PermissionDecision("allow", "mode")
    if permission_mode == "plan":
        return PermissionDecision("deny", "mode", f"{tool_name} is not available in plan mode.")
    for rule in allowed_rules:
        if _rule_allows(rule, tool_name, command):
            return PermissionDecision("allow", "rule")
    is_shell = tool_name == "Bash"
    if is_shell and command is not None and is_read_only_command(command):
        return PermissionDecision("allow", "subcommandResults")
    if is_shell and permission_mode in ("acceptEdits", "auto"):
        return PermissionDecision("allow", "mode")
    if permission_mode == "dontAsk":
        return PermissionDecision("deny", "mode", denial)
    if prompt_over_stdio:
        return PermissionDecision("ask", "prompt")
    return PermissionDecision("deny", "config", denial)


@dataclass(frozen=True)
class BashOutcome:
    output: str
    exit_code: int
    interrupted: bool = False


def bash_result_content(outcome: BashOutcome) -> tuple[str, bool, Any]:
    """``(content, is_error, tool_use_result)`` as the real Bash tool reports them."""
    output = outcome.output.rstrip("\n")
    if outcome.exit_code != 0:
        text = f"Exit code {outcome.exit_code}"
        if output:
            text += "\n" + output
        return text, True, "Error: " + text
    structured = {
        "stdout": output,
        "stderr": "",
        "interrupted": outcome.interrupted,
        "isImage": False,
        "noOutputExpected": output == "",
    }
    return (output if output else "(Bash completed with no output)"), False, structured


class BashTool:
    """One running ``bash -c`` command in its own session; ``kill_group`` ends its whole tree.

    The spawn is synchronous (``subprocess.Popen``), so once the child exists its pid is known: a signal
    handler running on the event loop can never see a started tool it cannot kill. The wait for output
    runs in a worker thread.
    """

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    async def run(self, command: str, cwd: str) -> BashOutcome:
        process = subprocess.Popen(  # noqa: ASYNC220 - synchronous on purpose, see the class docstring
            ["bash", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
        )
        self.process = process
        output_bytes, _ = await asyncio.get_running_loop().run_in_executor(None, process.communicate)
        return_code = process.returncode if process.returncode is not None else 0
        exit_code = 128 - return_code if return_code < 0 else return_code
        return BashOutcome(output_bytes.decode("utf-8", errors="replace"), exit_code)

    def kill_group(self) -> None:
        """SIGKILL the command's process group (its own session: pgid == pid)."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
