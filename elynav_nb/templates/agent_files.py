"""Agent files and the workspace manifest as text: render a Claude Code agent file, code the manifest.

Where it sits: pure, used by ``workspace_agents.py`` (which reads and writes the bytes).

An agent made from a template is a Claude Code agent file, ``.claude/agents/<name>.md``: YAML
front matter (``name``, ``description``, and the profile's ``tools``, ``model``,
``permissionMode`` and ``cli``) and the template's markdown as the system prompt, rendered by
the package's one agent-file renderer (``elynav_nb._agent_file``, shared with
``elynav_nb.agents``). The workspace manifest ``.elynav/agents.json`` records, per agent: ``template_id``, ``synchronized``, ``synced_template_version`` (the seed's
names), plus ``profile_id``, ``description`` and ``file``::

    {"formatVersion": 1,
     "agents": {"reviewer": {"template_id": "code-reviewer-1", "synchronized": true,
                             "synced_template_version": 2, "profile_id": "claude-sonnet",
                             "description": "...", "file": ".claude/agents/reviewer.md"}}}

Names and ids are checked whole (``fullmatch``), and ``file`` must be
``.claude/agents/<agent name>.md``: ``sync_agent`` writes there, so a hand-edited manifest
cannot send a write anywhere else; any other value is ``StoreCorrupt``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from elynav_nb._agent_file import render_agent_file as render_agent_file_text
from elynav_nb.errors import StoreCorrupt
from elynav_nb.templates.domain import AGENT_NAME_PATTERN, TEMPLATE_ID_PATTERN, Profile

__all__ = [
    "MANIFEST_FORMAT_VERSION",
    "ManifestEntry",
    "decode_manifest",
    "encode_manifest",
    "render_agent_file",
]

MANIFEST_FORMAT_VERSION = 1


@dataclass(frozen=True)
class ManifestEntry:
    """One agent of the workspace made from a template."""

    agent_name: str
    template_id: str
    synchronized: bool
    synced_template_version: int
    profile_id: str
    description: str
    file: str


def render_agent_file(agent_name: str, description: str, profile: Profile, prompt_md: str) -> str:
    """The text of a Claude Code agent file run with ``profile``: front matter, then the prompt.

    Written by the one renderer of the format (``elynav_nb._agent_file``), which the agent
    installer uses too: the same agent gives the same bytes on both paths, ``cli`` included.
    """
    return render_agent_file_text(
        name=agent_name,
        description=description,
        prompt=prompt_md,
        tools=profile.tools,
        model=profile.model,
        permission_mode=profile.permission_mode,
        cli=profile.cli,
    )


def _corrupt(reason: str) -> StoreCorrupt:
    return StoreCorrupt(
        f".elynav/agents.json is corrupt: {reason}. It was left untouched; fix it by hand.",
        details={"file": ".elynav/agents.json"},
    )


def _decode_entry(agent_name: object, raw: object) -> ManifestEntry:
    if not isinstance(agent_name, str) or not AGENT_NAME_PATTERN.fullmatch(agent_name):
        raise _corrupt(f"invalid agent name {agent_name!r}")
    if not isinstance(raw, dict):
        raise _corrupt(f"agent {agent_name!r} is not an object")
    template_id = raw.get("template_id")
    synchronized = raw.get("synchronized")
    version = raw.get("synced_template_version")
    profile_id = raw.get("profile_id")
    description = raw.get("description", "")
    expected_file = f".claude/agents/{agent_name}.md"
    file = raw.get("file", expected_file)
    if not isinstance(template_id, str) or not TEMPLATE_ID_PATTERN.fullmatch(template_id):
        raise _corrupt(f"agent {agent_name!r} has an invalid template_id")
    if not isinstance(synchronized, bool):
        raise _corrupt(f"agent {agent_name!r}: 'synchronized' must be true or false")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _corrupt(f"agent {agent_name!r} has an invalid synced_template_version")
    if not isinstance(profile_id, str) or not isinstance(description, str) or not isinstance(file, str):
        raise _corrupt(f"agent {agent_name!r} has an invalid profile_id, description or file")
    if file != expected_file:
        # sync_agent writes to this path: a hand-edited manifest must not send it out of .claude/agents/
        raise _corrupt(f"agent {agent_name!r}: 'file' must be {expected_file!r}, not {file!r}")
    return ManifestEntry(agent_name, template_id, synchronized, version, profile_id, description, file)


def decode_manifest(data: bytes) -> dict[str, ManifestEntry]:
    """The manifest's agents by name; ``StoreCorrupt`` for anything unexpected."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _corrupt("not UTF-8 JSON") from None
    if not isinstance(document, dict) or document.get("formatVersion") != MANIFEST_FORMAT_VERSION:
        raise _corrupt("missing or unsupported formatVersion")
    raw_agents = document.get("agents")
    if not isinstance(raw_agents, dict):
        raise _corrupt("'agents' is not an object")
    entries: dict[str, ManifestEntry] = {}
    for agent_name, raw in raw_agents.items():
        entries[agent_name] = _decode_entry(agent_name, raw)
    return entries


def encode_manifest(entries: dict[str, ManifestEntry]) -> bytes:
    agents: dict[str, dict[str, object]] = {}
    for agent_name in sorted(entries):
        entry = entries[agent_name]
        agents[agent_name] = {
            "template_id": entry.template_id,
            "synchronized": entry.synchronized,
            "synced_template_version": entry.synced_template_version,
            "profile_id": entry.profile_id,
            "description": entry.description,
            "file": entry.file,
        }
    document = {"formatVersion": MANIFEST_FORMAT_VERSION, "agents": agents}
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
