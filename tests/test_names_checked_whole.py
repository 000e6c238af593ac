"""Names, ids and path parts are checked whole; one-line text fields hold one line of plain text.

``re.match`` with a pattern ``^...$`` accepts ``"x\\n"``: ``$`` also matches before a final
newline. An agent named ``"x\\n"`` then becomes the file ``.claude/agents/x\\n.md``. The first
part of this file reads the package source and fails on any such guard left; the rest checks the
behaviour: every bad name is refused with a typed ``INVALID_INPUT`` error.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import elynav_nb
from elynav_nb.agents.definitions import AgentDefinition, install_agents, load_agents
from elynav_nb.errors import InvalidInput, StoreCorrupt
from elynav_nb.templates.domain import (
    LINE_SEPARATORS,
    checked_name,
    validate_agent_name,
    validate_template_id,
)
from elynav_nb.templates.service import TemplateService
from elynav_nb.templates.workspace_agents import WorkspaceAgents

PACKAGE_FOLDER = Path(elynav_nb.__file__).resolve().parent

# Patterns written ``^...$`` that parse text rather than guard a name, id or path part: ``$`` before a
# final newline changes nothing they let through.
_PARSERS_NOT_GUARDS = {
    "_CODED_MESSAGE": "crm/frames.py: reads 'CODE: message' out of an MCP error text (DOTALL)",
    "_TRAILING_DETAILS": "crm/frames.py: reads the trailing JSON details of an MCP error text (DOTALL)",
    "_BASH_RULE": "agents/protocols/launch.py: reads the command of a 'Bash(cmd:*)' rule; tool names arrive stripped",
    "_MCP_TOOL": "agents/protocols/launch.py: splits 'mcp__server__tool'; tool names arrive stripped",
}

# Guards in files this change may not edit (agents/protocols/*): their owners switch them to fullmatch.
_GUARDS_LEFT_TO_THEIR_OWNERS: dict[str, str] = {}

BAD_SUFFIXES = ["\n", "\r", "\u2028", "\r\n"]
BAD_NAMES = [f"x{suffix}" for suffix in BAD_SUFFIXES] + ["\nx"]


# -- the source scan -------------------------------------------------------------------------------------


def _is_whole_string_pattern(pattern: str) -> bool:
    """``^...$``: meant to cover the whole string, yet ``$`` lets a final newline through."""
    return pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")


def _compiled_pattern(value: ast.expr | None) -> str | None:
    """The literal of ``re.compile("...")``, else ``None``."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    function = value.func
    if not (isinstance(function, ast.Attribute) and function.attr == "compile"):
        return None
    first = value.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _whole_string_patterns(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        targets: list[ast.expr]
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        pattern = _compiled_pattern(value)
        if pattern is None or not _is_whole_string_pattern(pattern):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def _matched_name(call: ast.Call) -> str | None:
    """``P`` for ``P.match(...)``/``P.search(...)`` and ``module.P.match(...)``."""
    function = call.func
    if not isinstance(function, ast.Attribute) or function.attr not in ("match", "search"):
        return None
    owner = function.value
    if isinstance(owner, ast.Name):
        return owner.id
    if isinstance(owner, ast.Attribute):
        return owner.attr
    return None


def _is_inline_whole_string_match(call: ast.Call) -> bool:
    """``re.match("^...$", text)`` or ``re.search("^...$", text)``."""
    function = call.func
    if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)):
        return False
    if function.value.id != "re" or function.attr not in ("match", "search") or not call.args:
        return False
    first = call.args[0]
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and _is_whole_string_pattern(first.value)
    )


def _aliases_of(tree: ast.Module, pattern_names: set[str]) -> dict[str, str]:
    """``{local name: pattern name}`` for ``from m import PATTERN as local``."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in pattern_names and alias.asname:
                    aliases[alias.asname] = alias.name
    return aliases


def whole_string_guards_matched_with_dollar(sources: dict[str, str]) -> Iterator[tuple[str, int, str]]:
    """``(file, line, pattern name)`` of each ``.match``/``.search`` on a ``^...$`` pattern."""
    trees = {file: ast.parse(text, filename=file) for file, text in sources.items()}
    pattern_names: set[str] = set()
    for tree in trees.values():
        pattern_names |= _whole_string_patterns(tree)
    for file, tree in trees.items():
        aliases = _aliases_of(tree, pattern_names)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if _is_inline_whole_string_match(node):
                yield file, node.lineno, "<inline pattern>"
                continue
            name = _matched_name(node)
            if name is None:
                continue
            name = aliases.get(name, name)
            if name in pattern_names:
                yield file, node.lineno, name


@functools.cache
def _package_hits() -> list[tuple[str, int, str]]:
    """Every hit of the scan in the package (parsed once for the tests that read it)."""
    return list(whole_string_guards_matched_with_dollar(_package_sources()))


def _package_sources() -> dict[str, str]:
    sources: dict[str, str] = {}
    for path in sorted(PACKAGE_FOLDER.rglob("*.py")):
        sources[path.relative_to(PACKAGE_FOLDER.parent).as_posix()] = path.read_text(encoding="utf-8")
    return sources


def test_the_scan_finds_the_bug_it_looks_for() -> None:
    sources = {
        "a.py": 'import re\nNAME = re.compile(r"^[a-z]+$")\nok = NAME.match(text)\n',
        "b.py": "from a import NAME as N\nimport a\nN.search(x)\na.NAME.match(y)\nNAME.fullmatch(z)\n",
        "c.py": 'import re\nre.match(r"^[0-9]+$", value)\nSAFE = re.compile(r"^[a-z]+\\Z")\nSAFE.match(v)\n',
    }
    found = sorted(whole_string_guards_matched_with_dollar(sources))
    assert found == [
        ("a.py", 3, "NAME"),
        ("b.py", 3, "NAME"),
        ("b.py", 4, "NAME"),
        ("c.py", 2, "<inline pattern>"),
    ]


def test_no_guard_in_the_package_lets_a_final_newline_through() -> None:
    allowed = set(_PARSERS_NOT_GUARDS) | set(_GUARDS_LEFT_TO_THEIR_OWNERS)
    left = [hit for hit in _package_hits() if hit[2] not in allowed]
    assert left == [], "use fullmatch (or end the pattern with \\Z): " + ", ".join(
        f"{file}:{line} {name}" for file, line, name in left
    )


def test_a_toml_key_with_a_final_newline_is_quoted() -> None:
    from elynav_nb.agents.protocols.codex.launch import render_toml

    assert '"x\\n" = 1' in render_toml({"x\n": 1})  # written bare, it would break config.toml


# -- agent names, in elynav_nb.agents ------------------------------------------------------------------------


def _agent_text(name: str) -> str:
    return f"---\nname: {json.dumps(name)}\ndescription: An agent.\n---\n\nDo it.\n"


@pytest.mark.parametrize("bad_name", BAD_NAMES)
def test_an_agent_file_with_a_bad_name_is_refused(bad_name: str) -> None:
    with pytest.raises(InvalidInput, match='invalid "name"') as caught:
        AgentDefinition.parse(_agent_text(bad_name))
    assert caught.value.details["rule"] == "name"


@pytest.mark.parametrize("bad_name", BAD_NAMES)
def test_load_agents_never_returns_a_bad_name(tmp_path: Path, bad_name: str) -> None:
    (tmp_path / "agent.md").write_text(_agent_text(bad_name), encoding="utf-8")
    with pytest.raises(InvalidInput):
        load_agents(tmp_path)


@pytest.mark.parametrize("bad_name", BAD_NAMES)
def test_install_agents_writes_no_file_for_a_bad_name(tmp_path: Path, bad_name: str) -> None:
    with pytest.raises(InvalidInput):
        install_agents(tmp_path, [AgentDefinition(name=bad_name, description="An agent.", prompt="Do it.")])
    assert not (tmp_path / ".claude").exists()


# -- agent names and template ids, in elynav_nb.templates ----------------------------------------------------


@pytest.fixture
def service(tmp_path: Path) -> TemplateService:
    return TemplateService.open(tmp_path / "elynav-home")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("bad_name", BAD_NAMES)
def test_a_bad_agent_name_is_invalid_input(bad_name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_agent_name(bad_name)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details["field"] == "agentName"


@pytest.mark.parametrize("bad_name", BAD_NAMES)
def test_create_agent_from_template_writes_nothing_for_a_bad_name(
    service: TemplateService, workspace: Path, bad_name: str
) -> None:
    template = service.create("Reviewer", "You review.\n")
    with pytest.raises(InvalidInput) as caught:
        WorkspaceAgents(service).create_agent_from_template(template.id, bad_name, workspace)
    assert caught.value.code == "INVALID_INPUT"
    assert list(workspace.iterdir()) == []


@pytest.mark.parametrize("bad_id", BAD_NAMES)
def test_a_bad_template_id_is_invalid_input(bad_id: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_template_id(bad_id)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details["field"] == "templateId"


@pytest.mark.parametrize("suffix", BAD_SUFFIXES)
def test_an_existing_id_with_a_line_break_is_invalid_input_not_not_found(
    service: TemplateService, suffix: str
) -> None:
    template = service.create("Reviewer", "You review.\n")
    with pytest.raises(InvalidInput) as caught:
        service.read(template.id + suffix)
    assert caught.value.code == "INVALID_INPUT"


def test_the_manifest_cannot_send_a_sync_outside_the_agents_folder(
    service: TemplateService, workspace: Path
) -> None:
    agents = WorkspaceAgents(service)
    template = service.create("Reviewer", "v1\n")
    agents.create_agent_from_template(template.id, "reviewer", workspace)
    manifest_path = workspace / ".elynav" / "agents.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["agents"]["reviewer"]["file"] = "../outside.md"
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    service.update(template.id, content="v2\n")
    with pytest.raises(StoreCorrupt, match="'file' must be"):
        agents.sync_agent(workspace, "reviewer")
    assert not (workspace.parent / "outside.md").exists()


# -- one-line text fields ----------------------------------------------------------------------------------

CONTROL_CHARACTERS = ["\x1b[31mred\x1b[0m", "tab\there", "nul\x00", "del\x7f", "c1\x9b31m"]


def test_the_line_separators_are_those_of_splitlines() -> None:
    every_character = "".join(chr(code) for code in range(0x3000))
    assert {
        character for character in every_character if f"a{character}b".splitlines() != [f"a{character}b"]
    } == set(LINE_SEPARATORS)


@pytest.mark.parametrize("separator", sorted(LINE_SEPARATORS))
def test_a_template_name_refuses_every_line_separator(service: TemplateService, separator: str) -> None:
    with pytest.raises(InvalidInput, match="the template name must fit on one line") as caught:
        checked_name(f"Code{separator}reviewer")
    assert caught.value.details["field"] == "name"
    with pytest.raises(InvalidInput, match="the template name"):
        service.create(f"Code{separator}reviewer", "You review.\n")
    assert service.list_templates() == []


@pytest.mark.parametrize("text", CONTROL_CHARACTERS)
def test_a_template_name_refuses_control_characters(service: TemplateService, text: str) -> None:
    with pytest.raises(InvalidInput, match="the template name must be plain text") as caught:
        checked_name(text)
    assert caught.value.details["field"] == "name"
    template = service.create("Reviewer", "You review.\n")
    with pytest.raises(InvalidInput, match="the template name"):
        service.update(template.id, name=text)
    assert service.read(template.id).name == "Reviewer"


def test_a_template_name_keeps_accents_emoji_and_trims_spaces() -> None:
    assert checked_name("  Relecteur « strict » 👩‍💻  ") == "Relecteur « strict » 👩‍💻"


@pytest.mark.parametrize(
    "text", [f"one{separator}two" for separator in sorted(LINE_SEPARATORS)] + CONTROL_CHARACTERS
)
def test_an_agent_description_is_one_line_of_plain_text(
    service: TemplateService, workspace: Path, text: str
) -> None:
    template = service.create("Reviewer", "You review.\n")
    with pytest.raises(InvalidInput, match="the agent description") as caught:
        WorkspaceAgents(service).create_agent_from_template(
            template.id, "reviewer", workspace, description=text
        )
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details["field"] == "description"
    assert not (workspace / ".claude").exists()
