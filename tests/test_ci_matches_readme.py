"""``.ci/run`` runs the README's Quickstart commands exactly, in a fresh venv, before installing anything else.

A green CI that installs more than the README says hides a missing install step from the next new user:
this test reads the Quickstart block of ``README.md`` and checks that ``.ci/run`` runs its two lines as
written (comments aside), in order, in the venv it has just made, with no other ``pip install`` there first.
"""

from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def without_comment(line: str) -> str:
    """A shell line without its trailing ``# ...`` comment (none of these commands quotes a ``#``)."""
    return line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""


def quickstart_commands(readme: str) -> list[str]:
    section = readme.split("## Quickstart", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the README's Quickstart has no bash block"
    return [command for command in map(without_comment, block.group(1).splitlines()) if command]


def ci_commands(script: str) -> list[str]:
    return [command for command in map(without_comment, script.splitlines()) if command]


def test_the_quickstart_has_the_two_commands() -> None:
    commands = quickstart_commands((REPOSITORY / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    assert commands[0].endswith("elynav demo") and commands[1].endswith("python -m pytest")


def test_ci_runs_the_quickstart_first_in_a_fresh_venv() -> None:
    readme_commands = quickstart_commands((REPOSITORY / "README.md").read_text(encoding="utf-8"))
    commands = ci_commands((REPOSITORY / ".ci" / "run").read_text(encoding="utf-8"))
    positions = []
    for readme_command in readme_commands:
        assert readme_command in commands, f".ci/run does not run the README's {readme_command!r} as written"
        positions.append(commands.index(readme_command))
    assert positions == sorted(positions), "the README's commands run out of order"
    # The venv the README's commands run in: the last one made and activated before them.
    made = [index for index, command in enumerate(commands[: positions[0]]) if "-m venv" in command]
    activated = [
        index for index, command in enumerate(commands[: positions[0]]) if command.startswith("source ")
    ]
    assert made and activated and made[-1] < activated[-1], (
        ".ci/run does not make a fresh venv for the README"
    )
    between = commands[activated[-1] + 1 : positions[-1]]
    others = [command for command in between if "pip install" in command and command not in readme_commands]
    assert others == [], f".ci/run installs more than the README says before its test command: {others}"


def test_the_extras_come_after_the_readme_test_command() -> None:
    commands = ci_commands((REPOSITORY / ".ci" / "run").read_text(encoding="utf-8"))
    test_command = quickstart_commands((REPOSITORY / "README.md").read_text(encoding="utf-8"))[1]
    after = commands[commands.index(test_command) + 1 :]
    assert any("'.[test,browser]'" in command for command in after)
    assert any(
        "ELYNAV_REQUIRE_BROWSER=1" in command and "ELYNAV_REQUIRE_LAB=1" in command for command in after
    )
    assert any(command.startswith('python -m pytest -m "browser or lab"') for command in after)
