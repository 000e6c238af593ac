"""Who may cancel which ask: the office's one rule of rights. Pure.

Where it sits: ``Office.cancel`` asks ``check_cancel_right`` before it changes anything, for every
caller alike (a notebook cell, a board button, ``elynav cancel`` over the socket).

The rule (seed 002): the user may cancel any ask, queued or running; an agent may cancel only
the asks that it sent itself. Anyone else gets ``NOT_ALLOWED`` and nothing changes. Who the
caller *is* is decided elsewhere, without trusting the caller's word (``office/peers.py``).
"""

from __future__ import annotations

from elynav_nb.errors import NotAllowed

__all__ = ["USER", "check_cancel_right", "may_cancel"]

USER = "user"


def may_cancel(*, ask_sender: str, caller: str) -> bool:
    """True when ``caller`` may cancel an ask sent by ``ask_sender``."""
    return caller == USER or caller == ask_sender


def check_cancel_right(*, ask_id: str, ask_sender: str, agent: str, caller: str) -> None:
    """Raise ``NOT_ALLOWED`` unless ``caller`` may cancel the ask ``ask_id`` (sent by ``ask_sender`` to ``agent``)."""
    if may_cancel(ask_sender=ask_sender, caller=caller):
        return
    raise NotAllowed(
        f"{caller} may not cancel ask {ask_id}: only the user or its sender ({ask_sender}) may cancel an ask "
        f"to {agent}",
        details={"ask_id": ask_id, "caller": caller, "sender": ask_sender, "agent": agent},
    )
