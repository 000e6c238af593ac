"""Every environment variable the code reads is in the README's "Environment variables" section.

The names are found in the source, not listed by hand: the package's reads of an environment mapping
(``os.environ.get("X")``, ``environment["X"]``, ``os.getenv``, a constant or a loop variable holding the
name, a table of names), every ``ELYNAV_*`` name the package or the tests spell out, and the ones
``.ci/run`` uses. A new variable without its README row fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE = REPOSITORY / "elynav_nb"
VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
ELYNAV_NAME = re.compile(r"ELYNAV_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_*])")  # not a prefix: ELYNAV_REQUIRE_*
NOT_VARIABLES = {
    "ELYNAV_ERROR",  # the code of the root error, not a variable
    "RELEASE_VERSION",  # keys of a Docs instance's /api/v1.0/config/ answer, read like a mapping
    "COLLABORATION_WS_URL",
}


def _strings(node: ast.AST | None) -> list[str]:
    """The string constants of a constant, a tuple, list or set of them, or a dict's values."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [text for element in node.elts for text in _strings(element)]
    if isinstance(node, ast.Dict):
        return [text for value in node.values for text in _strings(value)]
    return []


def _module_constants(trees: list[ast.Module]) -> dict[str, list[str]]:
    """Module-level ``NAME = "..."`` (or a tuple, list or dict of strings), across the package."""
    constants: dict[str, list[str]] = {}
    for tree in trees:
        for statement in tree.body:
            targets: list[ast.expr] = []
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            for target in targets:
                if isinstance(target, ast.Name) and _strings(value):
                    constants.setdefault(target.id, []).extend(_strings(value))
    return constants


def _loop_values(tree: ast.Module) -> dict[str, list[str]]:
    """``for name in ("A", "B")``: the strings a loop variable takes."""
    values: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and _strings(node.iter):
            values.setdefault(node.target.id, []).extend(_strings(node.iter))
    return values


def _spelled_elynav_names(tree: ast.Module) -> set[str]:
    """``"ELYNAV_..."`` string constants, but not in ``__all__`` (Python names) nor a ``startswith`` prefix."""
    ignored: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            ignored.update(id(element) for element in ast.walk(node.value))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "startswith"
        ):
            ignored.update(id(argument) for argument in node.args)
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ELYNAV_NAME.fullmatch(node.value)
        and id(node) not in ignored
    }


def _names_of(node: ast.expr, constants: dict[str, list[str]], loops: dict[str, list[str]]) -> list[str]:
    if isinstance(node, ast.Constant):
        return _strings(node)
    if isinstance(node, ast.Name):
        return constants.get(node.id) or loops.get(node.id) or []
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):  # a table of names
        return constants.get(node.value.id, [])
    return []


def variables_read_by_the_package() -> set[str]:
    paths = sorted(PACKAGE.rglob("*.py"))
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in paths]
    constants = _module_constants(trees)
    found: set[str] = set()
    for tree in trees:
        loops = _loop_values(tree)
        for node in ast.walk(tree):
            candidates: list[ast.expr] = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                if node.func.attr in ("get", "getenv", "pop"):
                    candidates.append(node.args[0])
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                candidates.append(node.slice)
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
                receiver = ast.unparse(node.comparators[0])
                if "environ" in receiver:
                    candidates.append(node.left)
            for candidate in candidates:
                found.update(
                    name
                    for name in _names_of(candidate, constants, loops)
                    if VARIABLE_NAME.fullmatch(name) and (len(name) > 3 or name in ("HOME", "PATH"))
                )
        found |= _spelled_elynav_names(tree)  # every ELYNAV_* name the package spells out
    return found - NOT_VARIABLES


def elynav_variables_of_the_tests_and_ci() -> set[str]:
    found: set[str] = set()
    for path in sorted((REPOSITORY / "tests").rglob("*.py")):
        if "node_modules" in path.parts:  # the npm packages the tiers install (Python 2 files among them)
            continue
        found |= _spelled_elynav_names(ast.parse(path.read_text(encoding="utf-8")))
    found.update(ELYNAV_NAME.findall((REPOSITORY / ".ci" / "run").read_text(encoding="utf-8")))
    return found - NOT_VARIABLES


def readme_section() -> str:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert "\n## Environment variables\n" in readme, "the README has no 'Environment variables' section"
    return readme.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]


def documented_names() -> set[str]:
    """The names in the first column of the section's tables (a cell may name several)."""
    names: set[str] = set()
    for line in readme_section().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1]))
    return names


def test_the_scan_finds_the_variables_read_through_constants_loops_and_tables() -> None:
    found = variables_read_by_the_package()
    # os.environ.get(SOCKET_VARIABLE), environment.get(_ENVIRONMENT_VARIABLES[cli]), for name in (...)
    assert {"ELYNAV_OFFICE_SOCKET", "ELYNAV_GEMINI_CLI", "IS_SANDBOX", "OPENAI_BASE_URL"} <= found
    assert {"DOCS_SESSION_ID", "ELYNAV_LOG", "ELYNAV_CODEX_MODE", "XDG_STATE_HOME"} <= found
    assert "ELYNAV_REQUIRE_NODE" in elynav_variables_of_the_tests_and_ci()


def test_every_variable_the_code_reads_is_in_the_readme() -> None:
    documented = documented_names()
    missing = sorted((variables_read_by_the_package() | elynav_variables_of_the_tests_and_ci()) - documented)
    assert missing == [], f"add these to the README's 'Environment variables' tables: {missing}"


def test_each_row_says_what_the_variable_does_and_its_default() -> None:
    rows = [line for line in readme_section().splitlines() if re.match(r"^\|\s*`[A-Z]", line)]
    assert rows
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 3 and all(cells), f"a row needs name | what it does | default: {row}"
