"""A protocol defined in the tests only: the tiny ``echo`` CLI, as one folder and one registry entry.

Nothing of ``elynav_nb`` names it: ``cli.py`` is the CLI (a line protocol of its own), ``wire.py``
its wire (no I/O), ``launcher.py`` its launch step, and ``ENTRY`` below its registry entry. A test
registers ``ENTRY`` (``register_protocol``) and drives it through ``AgentRunner(cli="echo")``.
"""

from __future__ import annotations

from elynav_nb.agents.plan import Capabilities, ProtocolTraits
from elynav_nb.agents.protocols.registry import ProtocolEntry

from .launcher import ECHO_LOCATION, EchoLauncher

ECHO_NOTE = "echo repeats the prompt, word by word; it has no model"

ENTRY = ProtocolEntry(
    "echo",
    "lines",
    ProtocolTraits(
        Capabilities(
            persistent_process=True,
            permission_prompts=False,
            tool_rules_as_arguments=False,
            reports_cost=False,
            token_deltas=True,
            thinking=False,
            live_mcp_status=False,
            live_settings=False,
        ),
        hook_style="kernel",
        kernel_tools="loopback",
        notes=(ECHO_NOTE,),
        hook_notes="hooks= apply to kernel tools only: echo runs no tool",
        names_its_threads=True,
    ),
    ECHO_LOCATION,
    EchoLauncher,
)
