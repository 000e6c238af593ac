"""One agent definition (``AgentDefinition``): an agent file's text parsed, checked and written back.

Where it sits: in ``elynav_nb.agents``, under ``agent_folders.py`` (which finds, loads and installs
agent files) and behind ``definitions.py`` (the public import path of both). The runners, the office
and ``to_cli_agents_json`` (``--agents`` inline JSON) take the ``AgentDefinition`` values built here.

Data flow: text -> ``AgentDefinition.parse``: ``split_front_matter`` and ``load_front_matter`` of the
shared format module ``elynav_nb._agent_file``, then one check per rule (``_check_name``,
``_check_tools``...), each failure an ``AgentDefinitionInvalid`` that names the file and the rule ->
``AgentDefinition`` -> ``to_markdown`` (text again, by ``_agent_file.render_agent_file``, which the
templates' agent files use too), ``to_cli_agents_json`` (a dict), ``to_row``, ``_repr_html_``.

Pure but for one function: ``read_agent_text`` reads an agent file's bytes and decodes them (used by
``AgentDefinition.load`` and by ``agent_folders``); everything else takes and returns plain values.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from elynav_nb._agent_file import FRONT_MATTER_KEYS, load_front_matter, render_agent_file, split_front_matter
from elynav_nb._agent_file import agent_file_invalid as _invalid
from elynav_nb.errors import AgentDefinitionInvalid, AgentNotFound

__all__ = [
    "AGENT_CLIS",
    "ALLOWED_PERMISSION_MODES",
    "AgentDefinition",
    "peek_name",
    "read_agent_text",
]

ALLOWED_PERMISSION_MODES: tuple[str, ...] = (
    "default",
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "dontAsk",
    "plan",
    "manual",
)

# Checked with fullmatch; it ends in \Z, not $, which also matches before a final "\n" (a file "x\n.md").
_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*\Z")
AGENT_CLIS: tuple[str, ...] = ("claude", "codex", "gemini", "acp")

# Keys of an ``--agents`` JSON entry besides description/prompt/tools/model/permissionMode (design note §5).
# Other front-matter keys stay in ``extra`` but are not passed inline: the CLI may refuse unknown ones.
_EXTRA_KEYS_ACCEPTED_INLINE = (
    "disallowedTools",
    "effort",
    "mcpServers",
    "hooks",
    "maxTurns",
    "skills",
    "initialPrompt",
    "memory",
    "background",
    "isolation",
)

_PROMPT_PREVIEW_LINES = 12


@dataclass(frozen=True)
class AgentDefinition:
    """One agent: its front matter, split into known fields and ``extra``, and its system prompt.

    ``tools`` is empty when the file has no ``tools`` key: the agent then inherits every tool.
    ``cli`` names the CLI that runs the agent (``claude``, ``codex``, ``gemini``; ``None``: claude, or
    whatever the runner is told).
    ``extra`` keeps the other front-matter keys (``maxTurns``, ``hooks``, ``color``...) in file order.
    ``source_path`` is where it was read from; it takes no part in equality.
    """

    name: str
    description: str
    tools: tuple[str, ...] = ()
    model: str | None = None
    permission_mode: str | None = None
    prompt: str = ""
    cli: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    source_path: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Frozen all the way down at the first level: a read-only copy of the extra keys.
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        _check_cli(self.cli, _describe_source(self.source_path))

    # -- constructors --------------------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, source_path: Path | str | None = None) -> AgentDefinition:
        """Build a definition from the text of an agent file; raise ``AgentDefinitionInvalid`` on any rule."""
        path = Path(source_path) if source_path is not None else None
        where = _describe_source(path)
        front_matter_text, body = split_front_matter(text, where)
        front_matter = load_front_matter(front_matter_text, where)

        name = _check_name(front_matter.get("name"), where)
        description = _check_description(front_matter.get("description"), where)
        tools = _check_tools(front_matter, where)
        model = _check_model(front_matter.get("model"), where)
        permission_mode = _check_permission_mode(front_matter.get("permissionMode"), where)
        cli = _check_cli(front_matter.get("cli"), where)
        prompt = body.strip()
        if not prompt:
            raise _invalid(
                where,
                "prompt",
                f"{where}: the system prompt is empty: write the agent's instructions after the closing '---'",
            )

        extra: dict[str, Any] = {}
        for key, value in front_matter.items():
            if key not in FRONT_MATTER_KEYS:
                extra[str(key)] = value

        return cls(
            name=name,
            description=description,
            tools=tools,
            model=model,
            permission_mode=permission_mode,
            prompt=prompt,
            cli=cli,
            extra=extra,
            source_path=path,
        )

    @classmethod
    def load(cls, path: Path | str) -> AgentDefinition:
        """Read and parse one agent file (UTF-8)."""
        file_path = Path(path)
        return cls.parse(read_agent_text(file_path), source_path=file_path)

    # -- renderings ----------------------------------------------------------------------------------------

    @property
    def inherits_all_tools(self) -> bool:
        """True when the file lists no tools: the CLI gives the agent every tool."""
        return not self.tools

    def to_markdown(self) -> str:
        """The agent file text: ``AgentDefinition.parse(d.to_markdown()) == d`` for every definition that
        passes the loader's rules (the prompt is written, and read back, without surrounding blank space)."""
        return render_agent_file(
            name=self.name,
            description=self.description,
            prompt=self.prompt,
            tools=self.tools,
            model=self.model,
            permission_mode=self.permission_mode,
            cli=self.cli,
            extra=self.extra,
        )

    def to_cli_agents_json(self) -> dict[str, Any]:
        """This agent as one entry of the CLI's ``--agents`` JSON: ``{"<name>": <this dict>}``."""
        entry: dict[str, Any] = {"description": self.description, "prompt": self.prompt}
        if self.tools:
            entry["tools"] = list(self.tools)
        if self.model is not None:
            entry["model"] = self.model
        if self.permission_mode is not None:
            entry["permissionMode"] = self.permission_mode
        for key in _EXTRA_KEYS_ACCEPTED_INLINE:
            if key in self.extra:
                entry[key] = self.extra[key]
        return entry

    def to_row(self) -> dict[str, Any]:
        """One flat dict per agent: the rows of a DataFrame of agents."""
        return {
            "name": self.name,
            "description": self.description,
            "tools": ", ".join(self.tools) if self.tools else "(all)",
            "tool_count": len(self.tools),
            "model": self.model,
            "permission_mode": self.permission_mode,
            "cli": self.cli or "claude",
            "prompt_lines": len(self.prompt.splitlines()),
            "source_path": str(self.source_path) if self.source_path is not None else None,
        }

    def __repr__(self) -> str:
        tools = str(len(self.tools)) if self.tools else "all"
        source = f", source={str(self.source_path)!r}" if self.source_path is not None else ""
        cli = f", cli={self.cli!r}" if self.cli is not None else ""
        return (
            f"AgentDefinition(name={self.name!r}, tools={tools}, model={self.model!r}, "
            f"permission_mode={self.permission_mode!r}{cli}{source})"
        )

    def _repr_html_(self) -> str:
        tools_html = "".join(f"<code>{html.escape(tool)}</code> " for tool in self.tools) or "<em>all</em>"
        rows = [
            ("name", f"<strong>{html.escape(self.name)}</strong>"),
            ("description", html.escape(self.description)),
            ("tools", tools_html),
            ("model", html.escape(self.model or "(inherited)")),
            ("permission mode", html.escape(self.permission_mode or "(inherited)")),
            ("CLI", html.escape(self.cli or "claude")),
        ]
        for key, value in self.extra.items():
            rows.append((html.escape(key), html.escape(str(value))))
        if self.source_path is not None:
            rows.append(("source", f"<code>{html.escape(str(self.source_path))}</code>"))
        table_rows = "".join(
            f"<tr><th style='text-align:left;vertical-align:top'>{label}</th>"
            f"<td style='text-align:left'>{value}</td></tr>"
            for label, value in rows
        )
        prompt_lines = self.prompt.splitlines()
        preview = "\n".join(prompt_lines[:_PROMPT_PREVIEW_LINES])
        if len(prompt_lines) > _PROMPT_PREVIEW_LINES:
            preview += f"\n… ({len(prompt_lines) - _PROMPT_PREVIEW_LINES} more lines)"
        return (
            "<div class='elynav-agent-definition'>"
            f"<table>{table_rows}</table>"
            f"<details><summary>system prompt ({len(prompt_lines)} lines)</summary>"
            f"<pre style='white-space:pre-wrap'>{html.escape(preview)}</pre></details>"
            "</div>"
        )


def _describe_source(path: Path | None) -> str:
    return str(path) if path is not None else "<agent text>"


def _check_name(value: Any, where: str) -> str:
    if value is None:
        raise _invalid(where, "name", f'{where}: missing required "name" field in the front matter')
    if not isinstance(value, str):
        raise _invalid(
            where, "name", f'{where}: "name" must be a string, got {type(value).__name__} {value!r}'
        )
    if value.startswith("-"):
        raise _invalid(where, "name", f'{where}: invalid "name" {value!r}: names must not start with "-"')
    if not _NAME_PATTERN.fullmatch(value):
        raise _invalid(
            where,
            "name",
            f'{where}: invalid "name" {value!r}: use letters, digits, "-" and "_" only, '
            "starting with a letter or a digit",
        )
    return value


def _check_description(value: Any, where: str) -> str:
    if value is None:
        raise _invalid(
            where,
            "description",
            f'{where}: missing required "description" field in the front matter (say when to use the agent)',
        )
    if not isinstance(value, str):
        raise _invalid(
            where, "description", f'{where}: "description" must be a string, got {type(value).__name__}'
        )
    if not value.strip():
        raise _invalid(
            where, "description", f'{where}: "description" is empty: say in a sentence when to use the agent'
        )
    return value.strip()


def _check_tools(front_matter: Mapping[Any, Any], where: str) -> tuple[str, ...]:
    if "tools" not in front_matter:
        return ()
    value = front_matter["tools"]
    if isinstance(value, str):
        tools = _split_tool_list(value)
    elif isinstance(value, list):
        tools = []
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise _invalid(
                    where, "tools", f'{where}: every entry of "tools" must be a tool name, got {item!r}'
                )
            tools.append(item.strip())
    else:
        raise _invalid(
            where,
            "tools",
            f'{where}: "tools" must be a list or a comma string such as "Read, Grep", got {type(value).__name__}',
        )
    if not tools:
        raise _invalid(
            where,
            "tools",
            f'{where}: "tools" is empty: list at least one tool, or remove the key to inherit every tool',
        )
    return tuple(tools)


def _split_tool_list(text: str) -> list[str]:
    """Split ``"Read, Agent(a, b), Bash"`` on the commas outside parentheses."""
    tools: list[str] = []
    current = ""
    depth = 0
    for character in text:
        if character == "(":
            depth += 1
        elif character == ")" and depth > 0:
            depth -= 1
        if character == "," and depth == 0:
            tools.append(current.strip())
            current = ""
        else:
            current += character
    tools.append(current.strip())
    return [tool for tool in tools if tool]


def _check_model(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _invalid(
            where,
            "model",
            f'{where}: "model" must be a model name such as "sonnet", "opus", "haiku" or "inherit", got {value!r}',
        )
    return value.strip()


def _check_permission_mode(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in ALLOWED_PERMISSION_MODES:
        allowed = ", ".join(ALLOWED_PERMISSION_MODES)
        raise _invalid(
            where,
            "permissionMode",
            f'{where}: unknown "permissionMode" {value!r}: allowed values are {allowed}',
        )
    return value


def _check_cli(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in AGENT_CLIS:
        raise _invalid(
            where, "cli", f'{where}: unknown "cli" {value!r}: allowed values are {", ".join(AGENT_CLIS)}'
        )
    return value


def peek_name(text: str) -> str | None:
    """The ``name`` of an agent text that fails another rule, or ``None`` when it cannot be read."""
    try:
        front_matter_text, _ = split_front_matter(text, "")
        front_matter = load_front_matter(front_matter_text, "")
    except AgentDefinitionInvalid:
        return None
    name = front_matter.get("name")
    return name if isinstance(name, str) else None


def read_agent_text(path: Path) -> str:
    """The UTF-8 text of one agent file: ``AgentNotFound`` when missing, ``AgentDefinitionInvalid`` when unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AgentNotFound(f"agent file {path} does not exist", details={"source": str(path)}) from None
    except OSError as error:
        raise AgentDefinitionInvalid(
            f"{path}: cannot be read ({error.strerror or type(error).__name__})",
            details={"source": str(path), "rule": "read"},
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AgentDefinitionInvalid(
            f"{path}: not UTF-8 text (invalid byte at offset {error.start}); save the file as UTF-8",
            details={"source": str(path), "rule": "encoding"},
        ) from None
