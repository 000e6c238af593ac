"""The shape of the runner: its real signature, one class for every CLI, and imports without circles.

Shift-Tab in JupyterLab, ``AgentRunner?`` and IDEs read ``inspect.signature``: it must name every
parameter the class documents. The architecture (``ARCHITECTURE.md``, the runner issue): one facade,
a driver per process model, a wire per protocol; no base module imports its subclasses, and
``elynav_nb.agents`` has no import circle other than type-only imports.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from elynav_nb.agents import AgentDefinition, AgentRunner

AGENTS = Path(__file__).parents[2] / "elynav_nb" / "agents"

DOCUMENTED_PARAMETERS = [
    "definition",
    "workspace",
    "executable",
    "fallback_to_standin",
    "session_id",
    "resume",
    "model",
    "permission_mode",
    "permission_prompts",
    "permission_handler",
    "permission_timeout",
    "include_partial_messages",
    "turn_timeout",
    "idle_timeout",
    "tool_idle_timeout",
    "start_timeout",
    "interrupt_timeout",
    "settle_timeout",
    "stop_bounds",
    "max_line_bytes",
    "stderr_tail_bytes",
    "environment",
    "extra_arguments",
    "history_limit",
    "keep_deltas",
    "cli",
    "cli_mode",
    "cli_config",
    "config_home",
    "retry_timeout",
    "tools",
]


def test_the_signature_names_every_documented_parameter():
    parameters = list(inspect.signature(AgentRunner).parameters)
    assert parameters == DOCUMENTED_PARAMETERS
    documented = set(re.findall(r"``(\w+)", AgentRunner.__doc__ or ""))  # ``name`` or ``name=value``
    assert [name for name in DOCUMENTED_PARAMETERS if name not in documented] == []


def test_one_class_runs_every_cli(tmp_path):
    definition = AgentDefinition(name="elynav-tester", description="A test agent.", prompt="You test.")
    runners = [
        AgentRunner(definition, tmp_path),
        AgentRunner(definition, tmp_path, cli="codex", cli_mode="app-server"),
        AgentRunner(definition, tmp_path, cli="codex", cli_mode="exec"),
        AgentRunner(definition, tmp_path, cli="gemini"),
    ]
    assert {type(runner) for runner in runners} == {AgentRunner}
    assert [runner.plan.driver for runner in runners] == ["persistent", "persistent", "per-turn", "per-turn"]
    assert "__new__" not in vars(AgentRunner)
    for runner in runners:  # what a CLI can do is data, and every runner says what it cannot do
        assert isinstance(runner.limitations, tuple)
    assert runners[0].limitations == () and runners[0].capabilities.reports_cost
    assert not runners[3].capabilities.permission_prompts and runners[3].limitations


def module_name(path: Path) -> str:
    return "elynav_nb.agents." + ".".join(path.relative_to(AGENTS).with_suffix("").parts)


def runtime_imports(path: Path) -> set[str]:
    """The ``elynav_nb.agents`` modules ``path`` imports at run time (not under ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(child) for statement in node.body for child in ast.walk(statement))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("elynav_nb.agents"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("elynav_nb.agents"))
    return found


def test_no_import_circle_in_agents_other_than_type_only():
    modules = {module_name(path): path for path in AGENTS.rglob("*.py") if path.name != "__init__.py"}
    graph = {
        name: {target for target in runtime_imports(path) if target in modules}
        for name, path in modules.items()
    }
    circles = []

    def visit(name: str, trail: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in trail:
                circles.append(trail[trail.index(target) :] + [target])
            elif len(trail) < 30:
                visit(target, [*trail, target])

    for name in sorted(graph):
        visit(name, [name])
    assert circles == []


def test_no_base_module_imports_its_subclasses():
    for path in AGENTS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("elynav_nb.agents")
            ):
                target = AGENTS.joinpath(*node.module.split(".")[2:]).with_suffix(".py")
                if not target.is_file():
                    continue
                other = ast.parse(target.read_text(encoding="utf-8"))
                subclasses = [
                    klass.name
                    for klass in other.body
                    if isinstance(klass, ast.ClassDef)
                    and any(ast.unparse(base) in defined for base in klass.bases)
                ]
                imported = {alias.name for alias in node.names}
                assert not (imported & set(subclasses)), f"{path.name} imports its subclasses {subclasses}"
