"""What an ask must be before the office queues it: its text, its timeout, its parent, depth and deadline. Pure.

Where it sits: ``Office.submit`` (and ``ask``, ``try_ask``, ``submit_for``) runs these checks, in
this order, before an ask exists; beside ``cascade`` (wait-for cycles) and ``rights`` (who may
cancel). Each bad input is ``INVALID_INPUT`` (``NOT_ALLOWED`` for a parent being cancelled) and
nothing is queued.

How data flows::

    text     -> checked_text: a non-empty string of at most ``max_text_chars`` characters
    timeout  -> checked_timeout: the office's ``ask_timeout`` when None, else a positive finite number
    parent   -> checked_parent: a running ask of the sender, not being cancelled
             -> check_depth: the delegation chain stays under ``max_delegation_depth``
    deadline -> capped_deadline: now + the timeout, never later than the parent's deadline
"""

from __future__ import annotations

import math
from typing import Protocol, TypeVar

from elynav_nb.errors import InvalidInput, NotAllowed

__all__ = [
    "ChainedAsk",
    "capped_deadline",
    "check_depth",
    "checked_parent",
    "checked_text",
    "checked_timeout",
]


class ChainedAsk(Protocol):
    """What the rules read of an ask (``asks.Ask``)."""

    @property
    def id(self) -> str: ...

    @property
    def agent(self) -> str: ...

    @property
    def done(self) -> bool: ...

    @property
    def cancelling(self) -> bool: ...

    @property
    def deadline(self) -> float: ...

    @property
    def parent(self) -> ChainedAsk | None: ...


AskType = TypeVar("AskType", bound=ChainedAsk)


def checked_text(text: object, max_chars: int) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("an ask needs a non-empty text")
    if len(text) > max_chars:
        raise InvalidInput(
            f"an ask's text is limited to {max_chars} characters, got {len(text)}",
            details={"limit": max_chars, "length": len(text)},
        )
    return text


def checked_timeout(timeout: object, default: float) -> float:
    if timeout is None:
        return default
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (0 < timeout < math.inf):
        raise InvalidInput("timeout must be a positive number of seconds")
    return float(timeout)


def checked_parent(parent: AskType, sender: str) -> AskType:
    """``parent`` when it may be the parent of an ask ``sender`` sends: one of its running asks."""
    if parent.cancelling:
        raise NotAllowed(
            f"ask {parent.id} is being cancelled: its turn may not ask anyone any more",
            details={"parent_id": parent.id},
        )
    if parent.done or parent.agent != sender:
        raise InvalidInput(
            f"ask {parent.id} is not a running ask of {sender}: it cannot be the parent",
            details={"parent_id": parent.id},
        )
    return parent


def check_depth(parent: ChainedAsk, limit: int) -> None:
    """``INVALID_INPUT`` when an ask under ``parent`` would make a delegation chain of ``limit`` asks or more."""
    depth, ancestor = 1, parent
    while ancestor.parent is not None:
        depth, ancestor = depth + 1, ancestor.parent
    if depth >= limit:
        raise InvalidInput(
            f"delegation chains are limited to {limit} asks",
            details={"limit": limit},
        )


def capped_deadline(now: float, bound: float, parent: ChainedAsk | None) -> float:
    """``now + bound``, but never later than the deadline of the ask it was sent from."""
    deadline = now + bound
    return min(deadline, parent.deadline) if parent is not None else deadline
