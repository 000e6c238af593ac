"""Finding an agent the way the CLI does, and installing agents atomically into a workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elynav_nb.agents.definitions import (
    AgentDefinition,
    builtin_agents,
    default_agents_folder,
    find_agent_file,
    install_agents,
)
from elynav_nb.errors import AgentDefinitionInvalid, AgentNotFound, Duplicate


def _agent_text(name: str, prompt: str = "Do the job.") -> str:
    return f"---\nname: {name}\ndescription: Agent {name}.\ntools: Read\n---\n\n{prompt}\n"


def _put_agent(folder: Path, file_name: str, name: str, prompt: str = "Do the job.") -> Path:
    agents_folder = folder / ".claude" / "agents"
    agents_folder.mkdir(parents=True, exist_ok=True)
    path = agents_folder / file_name
    path.write_text(_agent_text(name, prompt), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


# -- find_agent_file -------------------------------------------------------------------------------------


def test_found_by_front_matter_name_not_file_name(tmp_path: Path, home: Path) -> None:
    workspace = tmp_path / "ws"
    path = _put_agent(workspace, "weird-file-name.md", "named-differently")
    assert find_agent_file(workspace, "named-differently", home=home) == path
    assert find_agent_file(workspace, "weird-file-name", home=home) is None


def test_found_in_a_parent_folder(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    path = _put_agent(project, "helper.md", "helper")
    workspace = project / "src" / "deep"
    workspace.mkdir(parents=True)
    assert find_agent_file(workspace, "helper", home=home) == path


def test_nearest_folder_wins_over_parents_and_home(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    _put_agent(project, "helper.md", "helper")
    _put_agent(home, "helper.md", "helper")
    workspace = project / "sub"
    nearest = _put_agent(workspace, "mine.md", "helper")
    assert find_agent_file(workspace, "helper", home=home) == nearest


def test_found_in_the_user_folder_last(tmp_path: Path, home: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = _put_agent(home, "user-agent.md", "user-agent")
    assert find_agent_file(workspace, "user-agent", home=home) == path
    assert find_agent_file(workspace, "nobody", home=home) is None


def test_home_defaults_to_the_home_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fake-home"
    path = _put_agent(home, "u.md", "from-home")
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert find_agent_file(workspace, "from-home") == path


def test_broken_files_of_other_agents_are_skipped(tmp_path: Path, home: Path) -> None:
    workspace = tmp_path / "ws"
    agents_folder = workspace / ".claude" / "agents"
    agents_folder.mkdir(parents=True)
    (agents_folder / "a-broken.md").write_text("---\nname: other\n---\nno description\n", encoding="utf-8")
    (agents_folder / "b-latin1.md").write_bytes("---\nname: é\n".encode("latin-1"))
    good = _put_agent(workspace, "c-good.md", "wanted")
    assert find_agent_file(workspace, "wanted", home=home) == good


def test_broken_file_with_the_wanted_name_raises(tmp_path: Path, home: Path) -> None:
    # The CLI would skip it silently and run its default agent: we say why instead.
    workspace = tmp_path / "ws"
    agents_folder = workspace / ".claude" / "agents"
    agents_folder.mkdir(parents=True)
    broken = agents_folder / "wanted.md"
    broken.write_text("---\nname: wanted\n---\nno description\n", encoding="utf-8")
    with pytest.raises(AgentDefinitionInvalid, match="description") as caught:
        find_agent_file(workspace, "wanted", home=home)
    assert str(broken) in str(caught.value)


# -- install_agents --------------------------------------------------------------------------------------


def test_install_all_six_into_claude_agents(tmp_path: Path, home: Path) -> None:
    paths = install_agents(tmp_path)
    folder = tmp_path / ".claude" / "agents"
    assert sorted(path.name for path in paths) == sorted(
        path.name for path in default_agents_folder().glob("*.md")
    )
    for path in paths:
        assert path.parent == folder
        assert path.read_bytes() == (default_agents_folder() / path.name).read_bytes()
        assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    # No temporary file left behind, nothing but the six agents.
    assert sorted(os.listdir(folder)) == sorted(path.name for path in paths)
    for name in builtin_agents():
        assert find_agent_file(tmp_path, name, home=home) == folder / f"{name}.md"


def test_install_a_subset_by_name_in_the_given_order(tmp_path: Path) -> None:
    paths = install_agents(tmp_path, ["elynav-sdr", "elynav-cmo"])
    assert [path.name for path in paths] == ["elynav-sdr.md", "elynav-cmo.md"]
    assert sorted(os.listdir(tmp_path / ".claude" / "agents")) == ["elynav-cmo.md", "elynav-sdr.md"]


def test_install_a_custom_definition(tmp_path: Path) -> None:
    custom = AgentDefinition(name="custom", description="A custom agent.", tools=("Read",), prompt="Hello.")
    (path,) = install_agents(tmp_path, [custom])
    assert path == tmp_path / ".claude" / "agents" / "custom.md"
    assert AgentDefinition.load(path) == custom


def test_install_unknown_name_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound, match="elynav-sdr"):
        install_agents(tmp_path, ["elynav-sdr-typo"])
    assert not (tmp_path / ".claude").exists()


def test_overwrite_replaces_by_default(tmp_path: Path) -> None:
    (path,) = install_agents(tmp_path, ["elynav-sdr"])
    path.write_text(_agent_text("elynav-sdr", "old local version"), encoding="utf-8")
    install_agents(tmp_path, ["elynav-sdr"])
    assert path.read_bytes() == (default_agents_folder() / "elynav-sdr.md").read_bytes()


def test_no_overwrite_refuses_changed_files_before_writing_anything(tmp_path: Path) -> None:
    (sdr_path,) = install_agents(tmp_path, ["elynav-sdr"])
    local_text = _agent_text("elynav-sdr", "my local tweaks")
    sdr_path.write_text(local_text, encoding="utf-8")
    with pytest.raises(Duplicate, match="overwrite=True"):
        install_agents(tmp_path, ["elynav-cmo", "elynav-sdr"], overwrite=False)
    assert sdr_path.read_text(encoding="utf-8") == local_text
    assert not (tmp_path / ".claude" / "agents" / "elynav-cmo.md").exists(), "nothing written on refusal"


def test_no_overwrite_accepts_identical_files(tmp_path: Path) -> None:
    first = install_agents(tmp_path, overwrite=False)
    second = install_agents(tmp_path, overwrite=False)
    assert first == second


def test_other_file_with_the_same_name_is_refused(tmp_path: Path) -> None:
    other = _put_agent(tmp_path, "my-sdr.md", "elynav-sdr")
    with pytest.raises(Duplicate) as caught:
        install_agents(tmp_path, ["elynav-sdr"])
    assert str(other) in str(caught.value)
    assert not (tmp_path / ".claude" / "agents" / "elynav-sdr.md").exists()


def test_failed_write_leaves_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (path,) = install_agents(tmp_path, ["elynav-sdr"])
    before = path.read_bytes()

    def failing_replace(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    custom = AgentDefinition(name="elynav-sdr", description="Changed.", prompt="Changed.")
    with pytest.raises(OSError, match="No space"):
        install_agents(tmp_path, [custom])
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == ["elynav-sdr.md"]


def test_invalid_custom_definition_is_refused_before_writing(tmp_path: Path) -> None:
    escaping = AgentDefinition(name="../escape", description="Bad.", prompt="Bad.")
    with pytest.raises(AgentDefinitionInvalid, match='invalid "name"'):
        install_agents(tmp_path, [escaping])
    without_prompt = AgentDefinition(name="quiet", description="No prompt.")
    with pytest.raises(AgentDefinitionInvalid, match="prompt is empty"):
        install_agents(tmp_path, [without_prompt])
    assert not (tmp_path / ".claude").exists()
    assert not (tmp_path.parent / "escape.md").exists()


def test_same_agent_given_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Duplicate, match="given twice"):
        install_agents(tmp_path, ["elynav-sdr", "elynav-sdr"])
    assert not (tmp_path / ".claude").exists()
