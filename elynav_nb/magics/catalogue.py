"""``%elynav list``: the agent CLIs a runner can drive, whether each is found here, its modes and models.

Where it sits: read by ``elynav_nb.magics.extension``; it asks ``agents.locate`` where each CLI is
(the same rules a runner follows: ``executable``, the ``ELYNAV_*`` variable, ``PATH``) and starts
nothing. The models column says how a model is chosen for each CLI: the names are the CLI's own,
and a list of them cannot be read without an account (an ACP agent lists its own at session start).

How data flows: the protocol registry's CLIs -> ``locate_cli`` per CLI (no fallback) -> one row each ->
a DataFrame (``cli``, ``found``, ``stand-in``, ``modes``, ``models``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elynav_nb.agents.locate import locate_cli
from elynav_nb.agents.protocols.registry import cli_modes, cli_names
from elynav_nb.errors import ElynavError

if TYPE_CHECKING:
    import pandas

__all__ = ["MODELS", "STANDINS", "cli_catalogue"]

MODELS: dict[str, str] = {
    "claude": "sonnet, opus, haiku (aliases) or a full model id: model: in the agent file, or model=",
    "codex": "the codex account's models (model= or cli_config); claude aliases fall back to its default",
    "gemini": "gemini-2.5-pro, gemini-2.5-flash... (model=); claude aliases fall back to its default",
    "acp": "the agent lists its models at session start; model= / runner.set_model picks one",
}
STANDINS: dict[str, str] = {
    "claude": "executable='standin' (elynav-claude-standin; used when claude is not found)",
    "codex": "none (tests run the real codex on FakeModelApi)",
    "gemini": "none (tests run the real gemini on FakeModelApi)",
    "acp": "executable='standin' (elynav-acp-standin)",
}


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
                "stand-in": STANDINS[cli],
                "modes": ", ".join(cli_modes(cli)),
                "models": MODELS[cli],
            }
        )
    return pandas.DataFrame(rows, columns=["cli", "found", "stand-in", "modes", "models"])
