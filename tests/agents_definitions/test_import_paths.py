"""``elynav_nb.agents.definitions`` keeps every name it exported before the split into two modules."""

from __future__ import annotations

import importlib

from elynav_nb.agents import definitions
from elynav_nb.agents.definitions import agent_definition, agent_folders

EXPORTED_BEFORE_THE_SPLIT = [
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


def test_definitions_exports_the_same_names() -> None:
    assert sorted(definitions.__all__) == sorted(EXPORTED_BEFORE_THE_SPLIT)
    for name in EXPORTED_BEFORE_THE_SPLIT:
        assert hasattr(definitions, name), name


def test_each_name_is_the_object_of_the_module_that_owns_it() -> None:
    for name in EXPORTED_BEFORE_THE_SPLIT:
        owner = agent_definition if name in agent_definition.__all__ else agent_folders
        assert getattr(definitions, name) is getattr(owner, name), name


def test_the_package_still_exports_the_same_objects() -> None:
    agents_package = importlib.import_module("elynav_nb.agents")
    for name in (
        "AgentDefinition",
        "builtin_agents",
        "default_agents_folder",
        "find_agent_file",
        "install_agents",
    ):
        assert getattr(agents_package, name) is getattr(definitions, name)
    assert definitions.default_agents_folder() == agent_folders.default_agents_folder()
    assert (definitions.default_agents_folder() / "elynav-sdr.md").is_file()
