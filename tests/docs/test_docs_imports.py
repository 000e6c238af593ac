"""The shape of ``elynav_nb.docs``'s imports: no import circle (type-only and function-level imports
included), no use of another module's private name, and the one old flat path users were taught
(``elynav_nb.docs.frames``) still imports.

The graph is read from the source with ``ast``: every ``import`` / ``from ... import`` of a module
of ``elynav_nb.docs``, wherever it stands (top level, ``if TYPE_CHECKING:``, inside a function). A
``from package import name`` counts as an import of the package (its ``__init__``), or, when
``name`` is a submodule, of that submodule. Importing a package's submodule is not counted as
importing the package's ``__init__`` (Python runs it first, but a package ``__init__`` that only
re-exports cannot close a circle that way unless a submodule imports from the ``__init__``, which
the explicit edge catches).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

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


def imported_modules(tree: ast.AST, modules: dict[str, Path]) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in modules:
                    yield submodule
                elif node.module in modules:
                    yield node.module


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = all_modules(root)
    return {
        name: set(imported_modules(ast.parse(path.read_text()), modules)) - {name}
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


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
    graph = import_graph(ROOT)
    assert len(graph) >= 40  # the scan sees the whole package
    assert circles(graph) == []


def test_no_module_of_docs_uses_another_modules_private_names() -> None:
    assert private_uses(ROOT) == []


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    """Both checks fail on the shape the package had before (rest <-> rest_tree through a type-only
    import, ``DocsRestClient._request`` called from another module)."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "rest.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from elynav_nb.docs.rest_tree import Tree\n"
        "class Client:\n    async def _request(self): ...\n"
    )
    (tmp_path / "rest_tree.py").write_text(
        "from elynav_nb.docs.rest import Client\nclass Tree:\n    def __init__(self, rest: Client) -> None:\n"
        "        self.rest = rest\n    async def go(self):\n        return await self.rest._request()\n"
    )
    assert circles(import_graph(tmp_path)) == [["elynav_nb.docs.rest", "elynav_nb.docs.rest_tree"]]
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
