"""The import rules of the package, read from the code itself (``ast``: nothing is imported or run).

Every import counts: at the top of a module, under ``if TYPE_CHECKING:`` and inside a function.

- No import circle inside a capability package (``PACKAGES``).
- In ``elynav_nb.agents`` the runner is the top: no driver, launcher, protocol, codec or wire module
  imports ``runner.py``; only the package's public face and the ``RunnerManager`` do.
- No module reaches a ``_private`` name another module of ``elynav_nb`` defines (``from m import _x``,
  ``m._x``, ``something._x``); names defined outside the package (``os._exit``) are not its business.

A package joins a rule by being added to its list (``NO_CIRCLE_PACKAGES``, ``PRIVATE_NAME_PACKAGES``). A
class's own ``self._x`` and ``cls._x`` are its own business (an inherited method included).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import elynav_nb

PACKAGE_ROOT = Path(elynav_nb.__file__).parent
NO_CIRCLE_PACKAGES = ["elynav_nb.agents"]
PRIVATE_NAME_PACKAGES = ["elynav_nb.agents", "elynav_nb.sandbox"]
ALLOWED_RUNNER_IMPORTERS = {"elynav_nb.agents", "elynav_nb.agents.manager"}
_DISPLAY_HOOKS = ("_repr_", "_ipython_")  # IPython's display protocol: public names with a leading "_"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, ast.Module]:
    """Every module of ``elynav_nb``, parsed."""
    return {
        module_name(path): ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for path in sorted(PACKAGE_ROOT.rglob("*.py"))
    }


def absolute(module: str, node: ast.ImportFrom) -> str:
    """The module an ``from ... import`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    is_package = (PACKAGE_ROOT.parent / Path(*module.split(".")) / "__init__.py").exists()
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_modules(module: str, known: dict[str, ast.Module]) -> set[str]:
    """The modules of ``known`` that ``module`` imports (a ``from m import sub`` of a submodule: ``m.sub``)."""
    found: set[str] = set()
    for node in ast.walk(known[module]):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(module, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    found.add(f"{source}.{alias.name}")
                elif source in known:
                    found.add(source)
    found.discard(module)
    return found


def circles(package: str, known: dict[str, ast.Module]) -> list[list[str]]:
    """The strongly connected groups of more than one module among ``package``'s imports (Tarjan)."""
    members = [name for name in known if name == package or name.startswith(package + ".")]
    edges = {
        name: sorted(target for target in imported_modules(name, known) if target in members)
        for name in members
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in edges[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in members:
        if name not in index:
            visit(name)
    return groups


@pytest.mark.parametrize("package", NO_CIRCLE_PACKAGES)
def test_no_import_circle(package):
    assert circles(package, modules()) == []


def test_the_rules_can_fail():
    # two modules importing each other (one of them only for typing) are a circle; a module that
    # reaches another's private helper is a reach
    fake = {
        "elynav_nb.x": "",
        "elynav_nb.x.a": "def _helper(): ...\nfrom elynav_nb.x import b\n",
        "elynav_nb.x.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import elynav_nb.x.a\n",
        "elynav_nb.x.c": "from elynav_nb.x import a\na._helper()\nfrom elynav_nb.x.a import _helper\n",
    }
    known = {name: ast.parse(text) for name, text in fake.items()}
    assert circles("elynav_nb.x", known) == [["elynav_nb.x.a", "elynav_nb.x.b"]]
    assert private_reaches("elynav_nb.x.c", known, private_names_defined(known)) == [
        "line 2: a._helper (defined in elynav_nb.x.a)",
        "line 3: from elynav_nb.x.a import _helper",
    ]


def test_nothing_below_the_runner_imports_it():
    importers = {
        name
        for name in modules()
        if name.startswith("elynav_nb.agents")
        and "elynav_nb.agents.runner" in imported_modules(name, modules())
    }
    assert importers <= ALLOWED_RUNNER_IMPORTERS, importers - ALLOWED_RUNNER_IMPORTERS


def private_names_defined(known: dict[str, ast.Module]) -> dict[str, set[str]]:
    """``_name`` -> the modules that define it (functions, classes, methods, module and ``self.`` attributes)."""
    defined: dict[str, set[str]] = {}
    for module, tree in known.items():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.append(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.append(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.append(node.target.id)
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    defined.setdefault(name, set()).add(module)
    return defined


def private_reaches(module: str, known: dict[str, ast.Module], defined: dict[str, set[str]]) -> list[str]:
    """Where ``module`` uses a ``_private`` name that only other modules of the package define."""
    found: list[str] = []
    for node in ast.walk(known[module]):
        if isinstance(node, ast.ImportFrom):
            source = absolute(module, node)
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and source in known:
                    found.append(f"line {node.lineno}: from {source} import {alias.name}")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if not name.startswith("_") or name.startswith("__") or name.startswith(_DISPLAY_HOOKS):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            owners = defined.get(name, set())
            if owners and module not in owners:
                found.append(
                    f"line {node.lineno}: {ast.unparse(node)} (defined in {', '.join(sorted(owners))})"
                )
    return sorted(found, key=lambda line: int(line.split(":")[0].removeprefix("line ")))


@pytest.mark.parametrize("package", PRIVATE_NAME_PACKAGES)
def test_no_module_reaches_another_modules_private_names(package):
    known = modules()
    defined = private_names_defined(known)
    reaches = {
        module: private_reaches(module, known, defined)
        for module in known
        if module == package or module.startswith(package + ".")
    }
    assert {module: found for module, found in reaches.items() if found} == {}
