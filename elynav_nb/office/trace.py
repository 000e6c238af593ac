"""The office's log lines: each step of an ask, the office's start and stop, its socket's traffic.

Where it sits: called by ``office.py`` (``_notify``, at every step of an ask) and by
``socket_server.py`` (each request line in, each answer out). Logs to ``elynav_nb.office.trace``:
an ask ending at INFO, its other steps and the socket lines at DEBUG. Nothing is formatted unless
the level is enabled.

Secrets: every text goes through a ``Redactor`` that knows the office's employee tokens (the
``ELYNAV_OFFICE_TOKEN`` of each agent process), its user token, and the secret variables of this process's
environment, on top of the usual patterns (``elynav_nb._logging``). The office is read through
``served_office.TracedOffice`` (its workspace, user token and employees), not imported.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING

from elynav_nb._logging import Redactor

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask
    from elynav_nb.office.served_office import TracedOffice

__all__ = ["log_ask_event", "log_office", "office_redactor", "trace_logger"]

trace_logger = logging.getLogger(__name__)

_TEXT_CHARS = 2000  # an ask's text may be 100k characters: the log keeps its start


@functools.lru_cache(maxsize=8)
def _redactor_for(tokens: tuple[str, ...]) -> Redactor:
    return Redactor.for_environment(os.environ, extra=tokens)


def office_redactor(office: TracedOffice) -> Redactor:
    """The redactor of this office's log lines (its employees' tokens and this process's secrets)."""
    tokens = [employee.token for employee in office.employees.values()]
    return _redactor_for(tuple(sorted([*tokens, office.user_token])))


def log_office(office: TracedOffice, text: str) -> None:
    """An office-wide event at INFO (started, stopped)."""
    if trace_logger.isEnabledFor(logging.INFO):
        trace_logger.info("office %s: %s", office.workspace, office_redactor(office)(text))


def log_ask_event(office: TracedOffice, event: str, ask: Ask) -> None:
    """One step of an ask (``queued``, ``started``, ``turn``, ``cancelling``, ``ended``)."""
    level = logging.INFO if event == "ended" else logging.DEBUG
    if not trace_logger.isEnabledFor(level):
        return
    redactor = office_redactor(office)
    route = f"ask {ask.id} {ask.sender} -> {ask.agent}"
    if event == "queued":
        parent = f" (sent from ask {ask.parent_id})" if ask.parent_id else ""
        trace_logger.log(level, "%s queued%s: %s", route, parent, redactor.line(ask.text, _TEXT_CHARS))
    elif event == "turn" and ask.turn is not None:
        trace_logger.log(level, "%s: turn sent (session %s)", route, ask.turn.session_id)
    elif event == "cancelling":
        trace_logger.log(level, "%s cancelling: %s", route, redactor.line(ask.cancel_reason, _TEXT_CHARS))
    elif event == "ended" and ask.reply is not None:
        reply = ask.reply
        diagnostic = f" {reply.error_code}: {redactor.line(reply.error, _TEXT_CHARS)}" if reply.error else ""
        trace_logger.log(level, "%s ended %s after %.2f s%s", route, reply.outcome, reply.run_s, diagnostic)
        if trace_logger.isEnabledFor(logging.DEBUG):
            trace_logger.debug("%s reply: %s", route, redactor.line(reply.text, _TEXT_CHARS))
    else:
        trace_logger.log(level, "%s %s", route, event)
