"""Agent files in folders: the built-in agents, load a folder, find the file ``--agent NAME`` uses, install.

Where it sits: in ``elynav_nb.agents``, behind ``definitions.py`` (the public import path). The runner
uses ``find_agent_file`` to check that ``--agent NAME`` exists before it starts the CLI (an unknown
agent is NOT an error with stream-json input: the CLI silently runs its default agent);
``elynav agents install`` and the office use ``install_agents``. The six Elynav agents ship inside the
package in ``builtin/`` (a byte-identical copy of the repository's ``agents/`` folder).

Data flow: folder -> ``*.md`` files -> ``read_agent_text`` -> ``AgentDefinition.parse`` (all the
parsing and checking lives in ``agent_definition.py``) -> definitions keyed by front-matter name.
Installing goes back: definition -> ``to_markdown`` -> checked again by the loader ->
``elynav_nb._files.write_atomically`` into ``<workspace>/.claude/agents/<name>.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from elynav_nb._files import write_atomically
from elynav_nb.agents.definitions.agent_definition import AgentDefinition, peek_name, read_agent_text
from elynav_nb.errors import AgentDefinitionInvalid, AgentNotFound, Duplicate

__all__ = [
    "AGENTS_FOLDER_IN_WORKSPACE",
    "builtin_agents",
    "default_agents_folder",
    "find_agent_file",
    "install_agents",
    "load_agents",
]

# Where ``claude --agent NAME`` looks, relative to the working folder and each of its parents.
AGENTS_FOLDER_IN_WORKSPACE = Path(".claude") / "agents"


def default_agents_folder() -> Path:
    """The folder of the six Elynav agents shipped inside the package (a copy of the repo's ``agents/``)."""
    return Path(__file__).resolve().parent / "builtin"


def builtin_agents() -> dict[str, AgentDefinition]:
    """The six Elynav agents, keyed by name."""
    return load_agents(default_agents_folder())


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
                text = read_agent_text(path)
            except (AgentDefinitionInvalid, AgentNotFound):
                continue
            try:
                definition = AgentDefinition.parse(text, source_path=path)
            except AgentDefinitionInvalid:
                if peek_name(text) == name:
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
            other_name = peek_name(read_agent_text(path))
        except (AgentDefinitionInvalid, AgentNotFound):
            continue
        if other_name == name:
            raise Duplicate(
                f"{path} already defines the agent {name!r}; installing {target.name} would give the CLI two "
                "agents with one name: remove or rename that file first",
                details={"path": str(path), "name": name},
            )
