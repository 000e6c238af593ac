"""Pins the public API (as httpx does): a change to ``elynav_nb.__all__`` must be deliberate."""

from __future__ import annotations

import subprocess
import sys

import elynav_nb

EXPECTED_PUBLIC_NAMES = [
    "AgentDefinition",
    "AgentRunner",
    "Crm",
    "ElynavError",
    "LiveNotebook",
    "Office",
    "RunnerManager",
    "Templates",
    "Turn",
    "TurnResult",
    "__version__",
    "agent_tool",
    "df_tools",
    "install_agents",
    "kernel_tools",
    "load_agents",
    "notebook_tools",
    "write_mcp_config",
]


def test_public_names_are_pinned():
    assert elynav_nb.__all__ == EXPECTED_PUBLIC_NAMES


def test_every_public_name_resolves_from_its_capability():
    for name in elynav_nb.__all__:
        assert getattr(elynav_nb, name) is not None, name
    assert elynav_nb.AgentRunner is __import__("elynav_nb.agents", fromlist=["AgentRunner"]).AgentRunner


def test_unknown_names_raise_attribute_error():
    try:
        elynav_nb.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_has_no_side_effects():
    code = (
        "import sys, asyncio; policy = type(asyncio.get_event_loop_policy()); import elynav_nb; "
        "assert 'nest_asyncio' not in sys.modules and 'nest_asyncio2' not in sys.modules; "
        "assert 'ipywidgets' not in sys.modules and 'pandas' not in sys.modules; "
        "assert type(asyncio.get_event_loop_policy()) is policy; print('clean')"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "clean", completed.stderr
