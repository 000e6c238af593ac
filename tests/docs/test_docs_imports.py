"""The shape of ``elynav_nb.docs``'s imports: no import circle (type-only and function-level imports
included), no use of another module's private name, and the one old flat path users were taught
(``elynav_nb.docs.frames``) still imports.

The import graph and its circles are the package-wide rules' (``tests/test_import_rules.py``: every
``import`` / ``from ... import`` wherever it stands, a ``from package import name`` counting as an
import of the submodule when ``name`` is one). The private-name check here is stricter than the
package-wide one: any ``thing._name`` that this module does not define is a reach, a library's
private included (those ``docs`` relies on are listed, and checked in tests/docs/test_yxml_writer.py).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tests.test_import_rules import circles, modules

PACKAGE = "elynav_nb.docs"
ROOT = Path(__file__).resolve().parents[2] / "elynav_nb" / "docs"

# pycrdt's wrappers keep the native object in private attributes; ``_yxml_writer`` and the reader
# use them for speed with the pinned pycrdt (tests/docs/test_yxml_writer.py checks they exist).
# These are a library's internals, not another module of ours.
THIRD_PARTY_PRIVATE = {("blocknote/_yxml_writer.py", "_doc"), ("blocknote/reader.py", "_integrated")}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def all_modules(root: Path) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def private_uses(root: Path) -> list[str]:
    """``from elynav_nb... import _name`` (a name, not a module) and ``thing._name`` where
    ``_name`` is not this module's own (``self``/``cls`` excepted)."""
    modules = all_modules(root)
    problems = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        relative = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("elynav_nb"):
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private and f"{node.module}.{alias.name}" not in modules:
                        problems.append(f"{relative}:{node.lineno} imports {node.module}.{alias.name}")
            elif isinstance(node, ast.Attribute):
                attribute = node.attr
                if not attribute.startswith("_") or attribute.startswith("__"):
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if (relative, attribute) in THIRD_PARTY_PRIVATE:
                    continue
                if _defined_here(
                    tree, attribute
                ):  # this module's own private (another instance of its class)
                    continue
                problems.append(f"{relative}:{node.lineno} uses {ast.unparse(node)}")
    return problems


def _defined_here(tree: ast.AST, attribute: str) -> bool:
    """True when this module itself defines ``attribute`` as a function, class or attribute."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == attribute:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr == attribute:
            return True
    return False


def test_docs_has_no_import_circle() -> None:
    known = modules()
    assert len([name for name in known if name.startswith(PACKAGE + ".")]) >= 40  # the whole package
    assert circles(PACKAGE, known) == []


def test_no_module_of_docs_uses_another_modules_private_names() -> None:
    assert private_uses(ROOT) == []


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    """Both checks fail on the shape the package had before (rest <-> rest_tree through a type-only
    import, ``DocsRestClient._request`` called from another module)."""
    rest = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from elynav_nb.docs.rest_tree import Tree\n"
        "class Client:\n    async def _request(self): ...\n"
    )
    rest_tree = (
        "from elynav_nb.docs.rest import Client\nclass Tree:\n    def __init__(self, rest: Client) -> None:\n"
        "        self.rest = rest\n    async def go(self):\n        return await self.rest._request()\n"
    )
    sources = {"__init__": "", "rest": rest, "rest_tree": rest_tree}
    known = {
        PACKAGE + ("." + name if name != "__init__" else ""): ast.parse(text)
        for name, text in sources.items()
    }
    assert circles(PACKAGE, known) == [["elynav_nb.docs.rest", "elynav_nb.docs.rest_tree"]]
    for name, text in sources.items():
        (tmp_path / f"{name}.py").write_text(text)
    assert private_uses(tmp_path) == ["rest_tree.py:6 uses self.rest._request"]


def test_the_packages_keep_the_names_of_the_modules_they_replace() -> None:
    from elynav_nb.docs.blocknote import find_block, insert_block, read_blocks, root_group  # noqa: F401
    from elynav_nb.docs.rest import API_PREFIX, DocsRestClient, RequestThrottle, shared_throttle  # noqa: F401


def test_the_frame_codec_keeps_the_path_notebook_03_taught() -> None:
    """``elynav_nb.docs.frames`` is a thin alias: the same objects as ``live.frames``, every one of them."""
    old = importlib.import_module("elynav_nb.docs.frames")
    new = importlib.import_module("elynav_nb.docs.live.frames")
    assert old.__all__ == new.__all__
    for name in new.__all__:
        assert getattr(old, name) is getattr(new, name), name


def test_every_public_name_of_docs_resolves() -> None:
    import elynav_nb.docs as docs

    assert sorted(set(docs.__all__)) == sorted(docs.__all__)
    for name in docs.__all__:
        assert getattr(docs, name) is not None, name
    for name in ("OidcCredentials", "Thread", "Threads", "Comment", "Versions", "VersionDiff", "Person"):
        assert name in docs.__all__
