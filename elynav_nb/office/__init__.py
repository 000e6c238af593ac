"""elynav_nb.office: one agent = one employee, with a FIFO queue, cancel rights and a cascade.

The public surface: ``Office`` (employees, ``submit`` / ``ask`` / ``try_ask``, ``cancel``,
``history()``, ``board()``; ``start()`` hosts the workspace's office or attaches to the one serving
it, ``Office.connect`` only attaches), ``Employee``, the ``Ask`` handle and its ``Reply``, ``USER``
(the sender name of the person at the notebook), ``ASK_RULE`` (the Bash rule an agent definition
lists to delegate with ``elynav ask``) and ``OfficeClient`` (another process's way in: streamed asks
as ``RemoteAsk``, cancel, the watched board). Private modules: ``cascade`` and ``rights`` (pure
rules), ``ask_running`` and ``office_views`` (the parts of ``Office``), ``attached`` (an office
attached to another), ``history``, ``workspace``, ``peers``, ``wire`` and ``stream_wire`` (the socket's
protocol), ``socket_server`` and ``socket_streams``, ``ask_command``, ``serve_command``,
``acp_agent`` and ``acp_command`` (``elynav acp``), ``chat_persona`` (jupyter-ai, the chat extra).

Names load on first use, so ``elynav ask`` (which imports only ``wire`` and ``ask_command``)
starts without the runner machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask, AskStatus, Reply, ReplyOutcome
    from elynav_nb.office.client import OfficeClient, RemoteAsk
    from elynav_nb.office.employee import Employee
    from elynav_nb.office.office import Office, OfficeListener
    from elynav_nb.office.rights import USER
    from elynav_nb.office.staffing import ASK_RULE

_LAZY_NAMES = {
    "ASK_RULE": "elynav_nb.office.staffing",
    "Ask": "elynav_nb.office.asks",
    "AskStatus": "elynav_nb.office.asks",
    "Employee": "elynav_nb.office.employee",
    "Office": "elynav_nb.office.office",
    "OfficeClient": "elynav_nb.office.client",
    "OfficeListener": "elynav_nb.office.office",
    "RemoteAsk": "elynav_nb.office.client",
    "Reply": "elynav_nb.office.asks",
    "ReplyOutcome": "elynav_nb.office.asks",
    "USER": "elynav_nb.office.rights",
}

__all__ = [
    "ASK_RULE",
    "USER",
    "Ask",
    "AskStatus",
    "Employee",
    "Office",
    "OfficeClient",
    "OfficeListener",
    "RemoteAsk",
    "Reply",
    "ReplyOutcome",
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY_NAMES.get(name)
    if module_name is None:
        raise AttributeError(f"module 'elynav_nb.office' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
