"""``EchoLauncher``: what runs before the ``echo`` CLI starts (its command is given as ``executable``)."""

from __future__ import annotations

import os

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.protocols.command import CliCommand, CliLocation
from elynav_nb.agents.protocols.launcher import Launch, LaunchRequest, PersistentLauncher

from .wire import EchoWire

ECHO_LOCATION = CliLocation(
    name="echo",
    environment_variable="ELYNAV_ECHO_CLI",
    install_hint="give the echo CLI's command as executable=[python, cli.py]",
    split="shell",
    on_path=False,
)


class EchoLauncher(PersistentLauncher):
    location = ECHO_LOCATION

    def launch_sync(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        environment = {**os.environ, **context.options.process.environment}
        wire = EchoWire(start_timeout=context.options.bounds.start)
        return Launch(argv=command.argv, cwd=context.workspace, environment=environment, wire=wire)
