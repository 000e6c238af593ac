"""elynav_nb.office: one agent = one employee, with a FIFO queue, cancel rights and a cascade.

The public surface: ``Office`` (employees, ``submit`` / ``ask`` / ``try_ask``, ``cancel``,
``history()``, ``board()``), ``Employee``, the ``Ask`` handle and its ``Reply``, ``USER`` (the
sender name of the person at the notebook) and ``ASK_RULE`` (the Bash rule an agent definition
lists to delegate with ``elynav ask``). Private modules: ``cascade`` and ``rights`` (pure rules),
``ask_running`` and ``office_views`` (the parts of ``Office``), ``history``, ``workspace``, ``peers``,
``wire``, ``socket_server``, ``ask_command``.

Names load on first use, so ``elynav ask`` (which imports only ``wire`` and ``ask_command``)
starts without the runner machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask, AskStatus, Reply, ReplyOutcome
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
    "OfficeListener": "elynav_nb.office.office",
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
    "OfficeListener",
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
