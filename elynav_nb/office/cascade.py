"""The wait-for graph of the office: cycles refused at once, cancels that reach every waited-on ask. Pure.

Where it sits: ``Office.submit`` calls ``find_wait_cycle`` before it queues an ask sent from an
agent's turn; ``Office.cancel`` walks ``pending_descendants`` to cancel, at once and without
waiting on any process, every ask the cancelled one waits on.

The graph: agent X *waits for* agent Y while X's running turn has a pending ask (queued or
running) to Y. X cannot finish that turn before Y answers, and Y can serve no one else's ask
before its own running turn ends. So a new ask from X to Y closes a deadlock exactly when Y
already waits, directly or through others, for X (an agent asking itself is the shortest case).
Such an ask is refused with ``DEADLOCK``, never queued.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from elynav_nb.errors import Deadlock

__all__ = ["check_no_cycle", "find_wait_cycle", "pending_descendants"]


def find_wait_cycle(sender: str, target: str, waits_for: Callable[[str], Iterable[str]]) -> list[str] | None:
    """The cycle ``[sender, target, ..., sender]`` that an ask from ``sender`` to ``target`` would close, or None."""
    if sender == target:
        return [sender, sender]
    reached_from: dict[str, str] = {target: sender}
    frontier = [target]
    while frontier:
        agent = frontier.pop(0)
        for waited_on in waits_for(agent):
            if waited_on in reached_from:
                continue
            reached_from[waited_on] = agent
            if waited_on == sender:
                return _cycle_through(sender, target, reached_from)
            frontier.append(waited_on)
    return None


def _cycle_through(sender: str, target: str, reached_from: dict[str, str]) -> list[str]:
    walk_back = [sender]
    while walk_back[-1] != target:
        walk_back.append(reached_from[walk_back[-1]])
    return [sender, *reversed(walk_back)]


def check_no_cycle(sender: str, target: str, waits_for: Callable[[str], Iterable[str]]) -> None:
    """Raise ``DEADLOCK`` when an ask from ``sender`` to ``target`` would close a wait-for cycle."""
    cycle = find_wait_cycle(sender, target, waits_for)
    if cycle is None:
        return
    if len(cycle) == 2:
        message = f"{sender} cannot ask itself: it would wait on its own turn forever"
    else:
        message = f"asking {target} from {sender} would close the wait-for cycle {' -> '.join(cycle)}"
    raise Deadlock(message, details={"cycle": cycle})


Node = TypeVar("Node")


def pending_descendants(root: Node, pending_children: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """Every unfinished ask that ``root`` waits on, directly or not, parents before children."""
    found: list[Node] = []
    frontier = list(pending_children(root))
    while frontier:
        child = frontier.pop(0)
        found.append(child)
        frontier.extend(pending_children(child))
    return found
