"""``%elynav list``: the agent CLIs a runner can drive, whether each is found here, its modes and models.

Where it sits: read by ``elynav_nb.magics.extension``; it asks ``agents.locate`` where each CLI is
(the same rules a runner follows: ``executable``, the ``ELYNAV_*`` variable, ``PATH``) and starts
nothing. The models column says how a model is chosen for each CLI: the names are the CLI's own,
and a list of them cannot be read without an account (an ACP agent lists its own at session start).

How data flows: the protocol registry's CLIs -> ``locate_cli`` per CLI (no fallback), and the notes of
its entry (``models_note``, ``standin_note``: a protocol registered anywhere shows here) -> one row
each -> a DataFrame (``cli``, ``found``, ``stand-in``, ``modes``, ``models``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elynav_nb.agents.locate import locate_cli
from elynav_nb.agents.protocols.registry import cli_entry, cli_modes, cli_names
from elynav_nb.errors import ElynavError

if TYPE_CHECKING:
    import pandas

__all__ = ["cli_catalogue"]


def cli_catalogue() -> pandas.DataFrame:
    """One row per agent CLI: where a runner would find it now, its stand-in, its modes, its models."""
    import pandas

    rows = []
    for cli in cli_names():
        try:
            command = locate_cli(None, fallback_to_standin=False, cli=cli)
            found = " ".join(command.argv)
        except ElynavError as error:
            found = f"not found ({error.code})"
        rows.append(
            {
                "cli": cli,
                "found": found,
                "stand-in": _standin(cli),
                "modes": ", ".join(cli_modes(cli)),
                "models": cli_entry(cli).models_note,
            }
        )
    return pandas.DataFrame(rows, columns=["cli", "found", "stand-in", "modes", "models"])


def _standin(cli: str) -> str:
    """The entry's stand-in note, else its location's stand-in script, else none."""
    entry = cli_entry(cli)
    if entry.standin_note:
        return entry.standin_note
    script = entry.location.standin_script
    return f"executable='standin' ({script})" if script else "none"
