"""``write_mcp_config``: the .mcp.json an agent workspace uses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from elynav_nb.crm.workspace import write_mcp_config
from elynav_nb.errors import InvalidInput, NotFound, StoreCorrupt


def test_declares_the_crm_server_with_this_python_and_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent").mkdir()
    config_path = write_mcp_config("agent", crm_database="crm.sqlite")
    assert config_path == tmp_path / "agent" / ".mcp.json"
    crm_entry = json.loads(config_path.read_text())["mcpServers"]["crm"]
    assert crm_entry["command"] == sys.executable
    assert crm_entry["args"] == ["-m", "elynav_nb.crm.server", "--db", str(tmp_path / "crm.sqlite")]
    assert crm_entry["type"] == "stdio"
    assert [path.name for path in (tmp_path / "agent").iterdir()] == [".mcp.json"]  # no temporary left


def test_keeps_the_users_servers_and_adds_extra_ones(tmp_path: Path) -> None:
    config_path = tmp_path / ".mcp.json"
    config_path.write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}, "other": 1}))
    write_mcp_config(
        tmp_path,
        crm_database=tmp_path / "crm.sqlite",
        extra_servers={"templates": {"command": "elynav", "args": ["mcp", "templates"]}},
    )
    document = json.loads(config_path.read_text())
    assert set(document["mcpServers"]) == {"github", "crm", "templates"}
    assert document["other"] == 1
    write_mcp_config(tmp_path, crm_database=tmp_path / "other.sqlite")  # rewriting replaces our entry only
    document = json.loads(config_path.read_text())
    assert document["mcpServers"]["crm"]["args"][-1] == str(tmp_path / "other.sqlite")
    assert set(document["mcpServers"]) == {"github", "crm", "templates"}


def test_corrupt_existing_file_is_left_untouched(tmp_path: Path) -> None:
    config_path = tmp_path / ".mcp.json"
    config_path.write_text("{not json")
    with pytest.raises(StoreCorrupt):
        write_mcp_config(tmp_path, crm_database=tmp_path / "crm.sqlite")
    assert config_path.read_text() == "{not json"


def test_bad_calls(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        write_mcp_config(tmp_path / "missing", crm_database="crm.sqlite")
    with pytest.raises(InvalidInput):
        write_mcp_config(tmp_path)
    with pytest.raises(InvalidInput):
        write_mcp_config(tmp_path, extra_servers={"docs": {"args": []}})
