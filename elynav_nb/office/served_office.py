"""What the office's socket and its log lines use of an ``Office``: two narrow ``typing.Protocol``s.

Where it sits: between ``office.py`` (the ``Office`` that satisfies them, structurally) and the parts
the office owns and hands itself to: ``trace.py`` (``TracedOffice``: whose tokens to redact, which
workspace to name) and ``socket_server.py`` / ``socket_streams.py`` (``ServedOffice``: identify a
caller, submit, cancel, queue positions, the board, listeners, the history file). An ``Ask`` needs
less still: ``asks.AskCanceller``. None of them imports ``office.py``, so the office's parts do not
circle back to it, not even for typing.

How data flows: nothing runs here; ``Office`` passes ``self`` where these types are asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask
    from elynav_nb.office.employee import Employee
    from elynav_nb.office.history import HistoryLog
    from elynav_nb.office.office_views import OfficeListener
    from elynav_nb.office.peers import Caller

__all__ = ["ServedOffice", "TracedOffice"]


class TracedOffice(Protocol):
    """What a log line of the office needs: its workspace, and the tokens to redact."""

    @property
    def workspace(self) -> Path: ...

    @property
    def user_token(self) -> str: ...

    @property
    def employees(self) -> Mapping[str, Employee]: ...


class ServedOffice(TracedOffice, Protocol):
    """What the office's socket needs: who is calling, asks in and out, the board, the history file."""

    @property
    def status(self) -> str: ...

    @property
    def history_log(self) -> HistoryLog: ...

    @property
    def asks(self) -> list[Ask]: ...

    def identify(self, holders: Sequence[int], presented_token: str = "") -> Caller: ...

    def employee(self, name: str) -> Employee: ...

    def submit_for(
        self,
        caller: Caller,
        to: str,
        text: str,
        *,
        timeout: float | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> Ask: ...

    def get_ask(self, ask_id: str) -> Ask: ...

    def queue_position(self, ask: Ask) -> int: ...

    def cancel(self, ask_id: str, *, by: str = ..., reason: str = "") -> Ask: ...

    def add_listener(self, listener: OfficeListener) -> None: ...

    def remove_listener(self, listener: OfficeListener) -> None: ...
