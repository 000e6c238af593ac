"""Claude Code agent files (``.claude/agents/<name>.md``): parse, check, write back, find, install.

Where it sits: in ``elynav_nb.agents``, next to the runner. The runner uses ``find_agent_file`` to check
that ``--agent NAME`` exists before it starts the CLI (an unknown agent is NOT an error with stream-json
input: the CLI silently runs its default agent), and ``to_cli_agents_json`` to pass a definition inline
with ``--agents``. ``elynav agents install`` uses ``install_agents``. The six Elynav agents ship inside the
package in ``builtin/`` (a byte-identical copy of the repository's ``agents/`` folder).

An agent file is YAML front matter between two ``---`` lines, then the system prompt::

    ---
    name: elynav-sdr
    description: When to use this agent.
    tools: WebSearch, mcp__crm__search_accounts
    model: sonnet
    permissionMode: default
    cli: codex            # optional: claude (the default), codex or gemini
    ---

    You are ...

Data flow: bytes -> ``_read_agent_text`` -> text -> ``AgentDefinition.parse`` (pure: split and
``yaml.safe_load`` by the shared format module ``elynav_nb._agent_file``, then one check per rule, each
failure an ``AgentDefinitionInvalid`` that names the file and the rule) -> ``AgentDefinition`` ->
``to_markdown`` (text again, by ``_agent_file.render_agent_file``, which the templates' agent files use
too) or ``to_cli_agents_json`` (a dict).

The module has two halves: the pure half (parsing, checking, rendering; no I/O) and the file half
(``load``, ``load_agents``, ``find_agent_file``, ``install_agents``), which reads and writes files and
calls the pure half for everything else.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from elynav_nb._agent_file import FRONT_MATTER_KEYS, load_front_matter, render_agent_file, split_front_matter
from elynav_nb._agent_file import agent_file_invalid as _invalid
from elynav_nb._files import write_atomically
from elynav_nb.errors import AgentDefinitionInvalid, AgentNotFound, Duplicate

__all__ = [
    "AGENTS_FOLDER_IN_WORKSPACE",
    "AGENT_CLIS",
    "ALLOWED_PERMISSION_MODES",
    "AgentDefinition",
    "builtin_agents",
    "default_agents_folder",
    "find_agent_file",
    "install_agents",
    "load_agents",
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

# Where ``claude --agent NAME`` looks, relative to the working folder and each of its parents.
AGENTS_FOLDER_IN_WORKSPACE = Path(".claude") / "agents"

# Checked with fullmatch; it ends in \Z, not $, which also matches before a final "\n" (a file "x\n.md").
_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*\Z")
AGENT_CLIS: tuple[str, ...] = ("claude", "codex", "gemini")

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


# ---------------------------------------------------------------------------------------------------------
# Pure half: text in, AgentDefinition out (and back). No file access.
# ---------------------------------------------------------------------------------------------------------


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
        return cls.parse(_read_agent_text(file_path), source_path=file_path)

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


def _peek_name(text: str) -> str | None:
    """The ``name`` of an agent text that fails another rule, or ``None`` when it cannot be read."""
    try:
        front_matter_text, _ = split_front_matter(text, "")
        front_matter = load_front_matter(front_matter_text, "")
    except AgentDefinitionInvalid:
        return None
    name = front_matter.get("name")
    return name if isinstance(name, str) else None


# ---------------------------------------------------------------------------------------------------------
# File half: read, list, find, install. Parsing is left to the pure half above.
# ---------------------------------------------------------------------------------------------------------


def default_agents_folder() -> Path:
    """The folder of the six Elynav agents shipped inside the package (a copy of the repo's ``agents/``)."""
    return Path(__file__).resolve().parent / "builtin"


def builtin_agents() -> dict[str, AgentDefinition]:
    """The six Elynav agents, keyed by name."""
    return load_agents(default_agents_folder())


def _read_agent_text(path: Path) -> str:
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


def _agent_files_in(folder: Path) -> list[Path]:
    """The ``*.md`` files directly in ``folder``, sorted by file name; none when the folder is missing."""
    if not folder.is_dir():
        return []
    files: list[Path] = []
    for path in sorted(folder.glob("*.md")):
        if path.is_file():
            files.append(path)
    return files


def load_agents(folder: Path | str) -> dict[str, AgentDefinition]:
    """Every ``*.md`` agent in ``folder``, keyed by front-matter name (not file name).

    Strict, unlike the CLI (which skips bad files silently): any invalid file, or two files with the
    same name, raises ``AgentDefinitionInvalid``.
    """
    agents_folder = Path(folder)
    if not agents_folder.is_dir():
        raise AgentNotFound(
            f"agents folder {agents_folder} does not exist", details={"source": str(agents_folder)}
        )
    agents: dict[str, AgentDefinition] = {}
    for path in _agent_files_in(agents_folder):
        definition = AgentDefinition.load(path)
        existing = agents.get(definition.name)
        if existing is not None:
            raise AgentDefinitionInvalid(
                f"two agent files define the name {definition.name!r}: {existing.source_path} and {path}; "
                "the CLI would pick one of them: rename one",
                details={
                    "rule": "duplicate_name",
                    "name": definition.name,
                    "files": [str(existing.source_path), str(path)],
                },
            )
        agents[definition.name] = definition
    return agents


def _agent_folders_seen_by_cli(workspace: Path, home: Path) -> list[Path]:
    """``.claude/agents`` of the workspace, then of each parent up to the root, then of the home folder."""
    folders: list[Path] = []
    current = workspace.resolve()
    while True:
        folders.append(current / AGENTS_FOLDER_IN_WORKSPACE)
        if current.parent == current:
            break
        current = current.parent
    user_folder = home.resolve() / AGENTS_FOLDER_IN_WORKSPACE
    if user_folder not in folders:
        folders.append(user_folder)
    return folders


def find_agent_file(workspace: Path | str, name: str, *, home: Path | str | None = None) -> Path | None:
    """The file that ``claude --agent NAME`` run in ``workspace`` would use, or ``None``.

    Looks in ``.claude/agents/*.md`` of the workspace and of each parent folder (nearest first), then in
    ``~/.claude/agents/``, matching the front-matter ``name``, never the file name. Like the CLI, files that
    break the rules are skipped; but a broken file that declares this very name raises
    ``AgentDefinitionInvalid``, because the CLI would skip it and silently run its default agent.
    """
    home_folder = Path(home) if home is not None else Path.home()
    for folder in _agent_folders_seen_by_cli(Path(workspace), home_folder):
        for path in _agent_files_in(folder):
            try:
                text = _read_agent_text(path)
            except (AgentDefinitionInvalid, AgentNotFound):
                continue
            try:
                definition = AgentDefinition.parse(text, source_path=path)
            except AgentDefinitionInvalid:
                if _peek_name(text) == name:
                    raise
                continue
            if definition.name == name:
                return path
    return None


def install_agents(
    workspace: Path | str,
    agents: Iterable[str | AgentDefinition] | None = None,
    *,
    overwrite: bool = True,
) -> list[Path]:
    """Write agents into ``<workspace>/.claude/agents/<name>.md``, where ``claude --agent`` finds them.

    ``agents``: names of built-in agents or ``AgentDefinition`` objects; ``None`` means the six built-in
    agents. Each file is written atomically (``elynav_nb._files.write_atomically``: a temporary file in the
    same folder, then ``os.replace``).
    Every definition must pass the loader's rules (``AgentDefinitionInvalid`` otherwise). With
    ``overwrite=False`` an existing file with other content raises ``Duplicate`` before anything is
    written. Another file of the folder that declares the same name also raises ``Duplicate``: the CLI
    would see two agents with one name. Returns the paths, in the order given.
    """
    definitions = _definitions_to_install(agents)
    target_folder = Path(workspace) / AGENTS_FOLDER_IN_WORKSPACE

    planned: list[tuple[Path, bytes]] = []
    planned_names: set[str] = set()
    for definition in definitions:
        # A definition built in code has not been checked yet: the file must pass our own loader
        # (this also keeps the name a plain file name, so nothing is written outside the folder).
        markdown = definition.to_markdown()
        AgentDefinition.parse(markdown, source_path=f"<agent {definition.name!r} to install>")
        if definition.name in planned_names:
            raise Duplicate(
                f"the agent {definition.name!r} is given twice", details={"name": definition.name}
            )
        planned_names.add(definition.name)
        target = target_folder / f"{definition.name}.md"
        content = markdown.encode("utf-8")
        _refuse_name_clash(target_folder, target, definition.name)
        if target.exists() and not overwrite and target.read_bytes() != content:
            raise Duplicate(
                f"{target} already exists with other content; pass overwrite=True to replace it",
                details={"path": str(target), "name": definition.name},
            )
        planned.append((target, content))

    target_folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for target, content in planned:
        # Agent files are always 0o644, whatever mode an old file had (as the installer always wrote them).
        write_atomically(target, content, mode=0o644)
        written.append(target)
    return written


def _definitions_to_install(agents: Iterable[str | AgentDefinition] | None) -> list[AgentDefinition]:
    builtin = builtin_agents()
    if agents is None:
        return list(builtin.values())
    definitions: list[AgentDefinition] = []
    for agent in agents:
        if isinstance(agent, AgentDefinition):
            definitions.append(agent)
            continue
        definition = builtin.get(agent)
        if definition is None:
            available = ", ".join(sorted(builtin))
            raise AgentNotFound(
                f"no built-in agent named {agent!r}; available: {available}",
                details={"name": agent, "available": sorted(builtin)},
            )
        definitions.append(definition)
    return definitions


def _refuse_name_clash(folder: Path, target: Path, name: str) -> None:
    for path in _agent_files_in(folder):
        if path.name == target.name:
            continue
        try:
            other_name = _peek_name(_read_agent_text(path))
        except (AgentDefinitionInvalid, AgentNotFound):
            continue
        if other_name == name:
            raise Duplicate(
                f"{path} already defines the agent {name!r}; installing {target.name} would give the CLI two "
                "agents with one name: remove or rename that file first",
                details={"path": str(path), "name": name},
            )
