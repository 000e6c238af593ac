"""The flat module paths of ``elynav_nb.docs`` before its layer folders, still importable.

Where it sits: internal; ``elynav_nb.docs`` installs ``MovedModuleFinder`` once, on import. Before
issue 29 every module sat directly in ``docs/`` (``elynav_nb.docs.frames``, ``...connection``,
``...server``...); scripts, notebooks and other branches import those paths. Each old path is
the new module itself (the same object: one class per name, monkeypatches reach the real code),
imported when the old path is first asked for, so importing ``elynav_nb.docs`` stays as cheap as
before (the MCP modules, which load the ``mcp`` SDK, are imported only when asked for).

``elynav_nb.docs.blocknote`` and ``elynav_nb.docs.rest`` need no entry: they are packages now,
whose ``__init__`` exports what the old modules did. New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Final

__all__ = ["MOVED_MODULES", "MovedModuleFinder", "install"]

MOVED_MODULES: Final[dict[str, str]] = {
    f"elynav_nb.docs.{old}": f"elynav_nb.docs.{new}"
    for old, new in {
        "limits": "_limits",
        "frames": "live.frames",
        "connection": "live.connection",
        "block_schema": "blocknote.schema",
        "block_ids": "blocknote._ids",
        "block_reader": "blocknote.reader",
        "block_location": "blocknote._location",
        "block_inline_writer": "blocknote._inline_writer",
        "block_text_diff": "blocknote._text_diff",
        "block_builder": "blocknote.builder",
        "section_diff": "blocknote.section_diff",
        "yxml_writer": "blocknote._yxml_writer",
        "inline_markdown": "markdown.inline",
        "inline_pieces": "markdown._inline_pieces",
        "inline_html": "markdown.inline_html",
        "markdown_blocks": "markdown.blocks",
        "markdown_syntax": "markdown.syntax",
        "block_markdown": "markdown.render",
        "rest_tree": "rest.tree_client",
        "tree": "rest.tree",
        "server": "mcp.server",
        "server_common": "mcp.common",
        "server_content_tools": "mcp.content_tools",
        "server_tree_tools": "mcp.tree_tools",
        "server_service": "mcp.service",
    }.items()
}
"""Old path -> new path, for every module that moved."""


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the module at its new path (imported first if need be)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._real_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has set the alias spec on the module: give it its own back.
        module.__spec__ = self._real_spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old flat paths of ``MOVED_MODULES`` (and nothing else)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new_path = MOVED_MODULES.get(fullname)
        if new_path is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new_path))


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
