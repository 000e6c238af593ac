"""The import rules of the package, read from the code itself (``ast``: nothing is imported or run).

Every import counts: at the top of a module, under ``if TYPE_CHECKING:`` and inside a function.

- No import circle anywhere in ``elynav_nb`` (checked package by package, then whole: ``NO_CIRCLE_PACKAGES``).
- In ``elynav_nb.agents`` the runner is the top: no driver, launcher, protocol, codec or wire module
  imports ``runner.py``; only the package's public face and the ``RunnerManager`` do.
- No module reaches a ``_private`` name another module of ``elynav_nb`` defines (``from m import _x``,
  ``m._x``, ``something._x``); names defined outside the package (``os._exit``) are not its business.
  A package-level helper module named ``_x.py`` (``elynav_nb/_sync.py``) is shared across the package:
  importing it, or its public names, is fine; its ``_names`` are its own.
- No protocol folder of ``elynav_nb.agents.protocols`` (``claude/``, ``codex/``, ``gemini/``, ``acp/``)
  imports another's: what two protocols share is a top-level module of ``protocols/``.
- Capabilities (``CAPABILITIES``) do not import each other, nor the layers around them (widgets,
  magics, the sandbox, the command line): a capability imports itself, ``errors``, the package's
  ``_x.py`` helpers and the package root (``__version__``), plus the exceptions of
  ``ALLOWED_CAPABILITY_IMPORTS`` (``office -> agents``, as ARCHITECTURE.md says, and the one decided here).

Every rule is a function over a ``{module name: parsed module}`` map, fed a small bad graph in
``test_the_rules_can_fail`` so each is seen failing. A class's own ``self._x`` and ``cls._x`` are its
own business (an inherited method included).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import elynav_nb

PACKAGE_ROOT = Path(elynav_nb.__file__).parent
# Every first-level package of elynav_nb, then the whole: a circle between two packages shows in the last.
NO_CIRCLE_PACKAGES = sorted(
    f"elynav_nb.{folder.name}" for folder in PACKAGE_ROOT.iterdir() if (folder / "__init__.py").exists()
) + ["elynav_nb"]
PRIVATE_NAME_PACKAGES = ["elynav_nb"]  # every subpackage and top-level module
ALLOWED_RUNNER_IMPORTERS = {"elynav_nb.agents", "elynav_nb.agents.manager"}
PROTOCOLS = "elynav_nb.agents.protocols"
CAPABILITIES = ["agents", "crm", "docs", "notebook", "office", "templates"]
# The layers around the capabilities (ARCHITECTURE.md, "Around them"): they may import capabilities,
# never the reverse. Every first-level package is one or the other (test_every_package_is_classified).
AROUND_CAPABILITIES = ["magics", "sandbox", "widgets"]
# (importer, imported): a capability package, and a module or package of another capability under it.
ALLOWED_CAPABILITY_IMPORTS = {
    # ARCHITECTURE.md: the office runs one AgentRunner per employee.
    ("elynav_nb.office", "elynav_nb.agents"),
    # The live notebook offers itself to agents as tools (notebook/tools.py, `elynav mcp notebook`):
    # it builds a KernelToolSet and answers MCP with McpToolEndpoint, the tool layer every capability
    # that offers tools shares (df_tools does the same). Only that layer: never a runner, driver or protocol.
    ("elynav_nb.notebook", "elynav_nb.agents.tools"),
}
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
                if f"{source}.{alias.name}" in known:
                    continue  # a module (``from elynav_nb import _sync``): the package's shared helpers
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


def protocol_folder(module: str) -> str | None:
    """The protocol folder ``module`` belongs to (``claude`` for ``...protocols.claude.launch``), or None."""
    if not module.startswith(PROTOCOLS + "."):
        return None
    rest = module.removeprefix(PROTOCOLS + ".").split(".")
    return rest[0] if len(rest) > 1 or rest[0] in _protocol_folders() else None


@cache
def _protocol_folders() -> frozenset[str]:
    root = PACKAGE_ROOT / "agents" / "protocols"
    return frozenset(folder.name for folder in root.iterdir() if (folder / "__init__.py").exists())


def cross_protocol_imports(known: dict[str, ast.Module]) -> list[str]:
    """``a -> b`` for each module of a protocol folder that imports a module of another protocol's folder."""
    found = []
    for module in sorted(known):
        folder = protocol_folder(module)
        if folder is None:
            continue
        for target in sorted(imported_modules(module, known)):
            other = protocol_folder(target)
            if other is not None and other != folder:
                found.append(f"{module} -> {target}")
    return found


def test_no_protocol_folder_imports_another():
    assert {"acp", "claude", "codex", "gemini"} <= _protocol_folders()
    assert cross_protocol_imports(modules()) == []


def capability_of(module: str) -> str | None:
    """``elynav_nb.<capability>`` when ``module`` is in one of ``CAPABILITIES``, else None."""
    parts = module.split(".")
    return f"elynav_nb.{parts[1]}" if len(parts) > 1 and parts[1] in CAPABILITIES else None


def capability_reaches(known: dict[str, ast.Module]) -> list[str]:
    """``a -> b`` for each import of a capability's module that leaves what a capability may import."""
    found = []
    for module in sorted(known):
        capability = capability_of(module)
        if capability is None:
            continue
        for target in sorted(imported_modules(module, known)):
            inside = target == capability or target.startswith(capability + ".")
            shared = target in ("elynav_nb", "elynav_nb.errors") or target.startswith("elynav_nb._")
            allowed = any(
                importer == capability and (target == imported or target.startswith(imported + "."))
                for importer, imported in ALLOWED_CAPABILITY_IMPORTS
            )
            if not (inside or shared or allowed):
                found.append(f"{module} -> {target}")
    return found


def test_every_package_is_classified():
    """A new first-level package is a capability or a layer around them: the rule above must know which."""
    packages = {folder.name for folder in PACKAGE_ROOT.iterdir() if (folder / "__init__.py").exists()}
    assert packages == set(CAPABILITIES) | set(AROUND_CAPABILITIES)


def test_capabilities_do_not_import_each_other_nor_the_layers_around_them():
    assert capability_reaches(modules()) == []


def test_the_rules_can_fail():
    """Each rule, fed a small bad graph, reports it."""
    fake = {
        "elynav_nb": "",
        "elynav_nb._shared": "def helper(): ...\ndef _inner(): ...\n",
        "elynav_nb.x": "",
        "elynav_nb.x.a": "def _helper(): ...\nfrom elynav_nb.x import b\n",
        "elynav_nb.x.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import elynav_nb.x.a\n",
        "elynav_nb.x.c": "from elynav_nb.x import a\na._helper()\nfrom elynav_nb.x.a import _helper\n",
        # a `_module` and its public names may be imported; its `_names` may not
        "elynav_nb.x.d": (
            "from elynav_nb import _shared\nfrom elynav_nb._shared import helper\n_shared._inner()\n"
        ),
    }
    known = {name: ast.parse(text) for name, text in fake.items()}
    # two modules importing each other (one of them only for typing) are a circle
    assert circles("elynav_nb.x", known) == [["elynav_nb.x.a", "elynav_nb.x.b"]]
    assert circles("elynav_nb", known) == [["elynav_nb.x.a", "elynav_nb.x.b"]]
    # a module that reaches another's private helper is a reach
    defined = private_names_defined(known)
    assert private_reaches("elynav_nb.x.c", known, defined) == [
        "line 2: a._helper (defined in elynav_nb.x.a)",
        "line 3: from elynav_nb.x.a import _helper",
    ]
    assert private_reaches("elynav_nb.x.d", known, defined) == [
        "line 3: _shared._inner (defined in elynav_nb._shared)"
    ]


def test_the_protocol_and_capability_rules_can_fail():
    claude, acp = f"{PROTOCOLS}.claude", f"{PROTOCOLS}.acp"
    fake = {
        "elynav_nb": "",
        "elynav_nb.errors": "",
        "elynav_nb._sync": "",
        "elynav_nb.widgets": "",
        "elynav_nb.widgets.board": "",
        "elynav_nb.agents": "",
        "elynav_nb.agents.runner": "",
        "elynav_nb.agents.tools": "",
        "elynav_nb.agents.tools.tool_set": "",
        "elynav_nb.agents.protocols": "",
        f"{PROTOCOLS}.child_environment": "",
        claude: "",
        f"{claude}.launch": "def build(): ...\n",
        acp: "",
        f"{acp}.launcher": (
            f"from {claude}.launch import build\nfrom {PROTOCOLS}.child_environment import build\n"
        ),
        "elynav_nb.docs": "",
        "elynav_nb.docs.session": (
            "from elynav_nb import errors, _sync\nfrom elynav_nb.docs import addressing\n"
            "def show():\n    from elynav_nb.widgets import board\n"
        ),
        "elynav_nb.docs.addressing": "",
        "elynav_nb.notebook": "",
        "elynav_nb.notebook.tools": (
            "from elynav_nb.agents.tools.tool_set import KernelToolSet\n"
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from elynav_nb.agents.runner import AgentRunner\n"
        ),
        "elynav_nb.office": "",
        "elynav_nb.office.office": "from elynav_nb.agents.runner import AgentRunner\n",
    }
    known = {name: ast.parse(text) for name, text in fake.items()}
    assert cross_protocol_imports(known) == [f"{acp}.launcher -> {claude}.launch"]
    assert capability_reaches(known) == [
        "elynav_nb.docs.session -> elynav_nb.widgets.board",  # a capability never imports widgets
        "elynav_nb.notebook.tools -> elynav_nb.agents.runner",  # the tool layer only, even for typing
    ]
