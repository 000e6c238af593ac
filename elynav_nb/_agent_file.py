"""The Claude Code agent file format as text: split it, read its front matter, write it back.

Where it sits: a package-level private module, pure (no I/O), shared by the two places that
handle agent files and must not import each other: ``elynav_nb.agents.definitions`` (parse,
check, install) and ``elynav_nb.templates.agent_files`` (agents made from templates). Both
write agent files with ``render_agent_file`` only, so the same agent gives the same bytes.

An agent file is YAML front matter between two ``---`` lines, a blank line, the system prompt::

    ---
    name: elynav-sdr
    description: When to use this agent.
    tools: WebSearch, mcp__crm__search_accounts
    model: sonnet
    permissionMode: default
    cli: codex
    ---

    You are ...

Data flow: text -> ``split_front_matter`` -> (front matter text, body) -> ``load_front_matter``
-> a dict of keys, which the agents loader checks rule by rule. Back: the fields ->
``render_agent_file`` -> text. The known keys come first, in ``FRONT_MATTER_KEYS`` order, each
on one ``key: value`` line quoted by YAML only where needed (accents kept); absent ones (``None``,
no tools) are left out; the other keys (``extra``) follow in their own order; the prompt is
written without surrounding blank space, as the loader reads it back. A broken file raises
``AgentDefinitionInvalid`` naming the file (``where``) and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from elynav_nb.errors import AgentDefinitionInvalid

__all__ = [
    "FRONT_MATTER_KEYS",
    "agent_file_invalid",
    "load_front_matter",
    "render_agent_file",
    "split_front_matter",
]

FRONT_MATTER_KEYS: tuple[str, ...] = ("name", "description", "tools", "model", "permissionMode", "cli")
"""The front-matter keys with a field of their own; any other key is an ``extra`` one."""

_FENCE_PATTERN = re.compile(r"---[ \t]*")


def agent_file_invalid(where: str, rule: str, message: str) -> AgentDefinitionInvalid:
    """The error for one broken rule: the message names the file, ``details`` the rule."""
    return AgentDefinitionInvalid(message, details={"source": where, "rule": rule})


def _is_fence(line: str) -> bool:
    return _FENCE_PATTERN.fullmatch(line.rstrip("\r\n")) is not None


def split_front_matter(text: str, where: str) -> tuple[str, str]:
    """``(front matter text, body)``; the front matter sits between a first line ``---`` and the next one."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or not _is_fence(lines[0]):
        raise agent_file_invalid(
            where,
            "front_matter",
            f"{where}: no front matter: the file must start with a line '---', then the YAML keys "
            "(name, description, ...), then a line '---'",
        )
    for index in range(1, len(lines)):
        if _is_fence(lines[index]):
            front_matter_text = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return front_matter_text, body
    raise agent_file_invalid(
        where,
        "front_matter",
        f"{where}: unterminated front matter: the opening '---' on line 1 has no closing '---' line",
    )


def load_front_matter(front_matter_text: str, where: str) -> dict[Any, Any]:
    """The front matter's keys (``{}`` when it is empty); ``AgentDefinitionInvalid`` when it is not YAML keys."""
    try:
        loaded = yaml.safe_load(front_matter_text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        # The front matter starts on line 2 of the file (line 1 is '---'); YAML marks count from 0.
        line = f" line {mark.line + 2}" if mark is not None else ""
        raise AgentDefinitionInvalid(
            f"{where}{line}: the front matter is not valid YAML ({problem})",
            details={"source": where, "rule": "yaml", "line": mark.line + 2 if mark is not None else None},
        ) from None
    except yaml.YAMLError as error:
        raise agent_file_invalid(
            where, "yaml", f"{where}: the front matter is not valid YAML ({error})"
        ) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise agent_file_invalid(
            where,
            "front_matter",
            f"{where}: the front matter must be YAML keys ('name: ...'), not a {type(loaded).__name__}",
        )
    return loaded


def render_agent_file(
    *,
    name: str,
    description: str,
    prompt: str,
    tools: Sequence[str] = (),
    model: str | None = None,
    permission_mode: str | None = None,
    cli: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The text of one agent file. No tools means the key is left out: the agent inherits every tool."""
    lines = ["---", _yaml_line("name", name), _yaml_line("description", description)]
    if tools:
        lines.append(_yaml_line("tools", ", ".join(tools)))
    if model is not None:
        lines.append(_yaml_line("model", model))
    if permission_mode is not None:
        lines.append(_yaml_line("permissionMode", permission_mode))
    if cli is not None:
        lines.append(_yaml_line("cli", cli))
    if extra:
        extra_yaml = yaml.safe_dump(
            dict(extra), allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000
        )
        lines.append(extra_yaml.rstrip("\n"))
    lines.append("---")
    lines.append("")
    lines.append(prompt.strip())
    return "\n".join(lines) + "\n"


def _yaml_line(key: str, value: str) -> str:
    """``key: value`` with YAML quoting only when the value needs it (accents kept)."""
    return yaml.safe_dump({key: value}, allow_unicode=True, width=10_000).rstrip("\n")
