"""Who is calling the office socket, decided without trusting what the caller says.

Where it sits: ``office/socket_server.py`` calls ``identify_caller`` once per connection; the
office then applies its rights and cascade rules to that name.

How it decides:

1. The kernel tells the peer's pid and uid (``SO_PEERCRED``); another uid is refused.
2. The peer's ancestors are walked (parent links, each checked with its start time so a reused
   pid never matches): the first one that is an agent CLI started by this office names the
   caller. ``elynav ask`` run by agent C's Bash tool descends from C's CLI, whatever name it
   passes or whatever variables it sets.
3. Without such an ancestor (the CLI was killed and its tool re-parented to PID 1), the office
   token found in the peer's own environment (read from ``/proc``, not from the request) names
   the agent it was given to.
4. Otherwise the caller is the user (a notebook, a terminal).

A same-uid process that deliberately drops its token and leaves its parent tree cannot be told
from the user: that is the limit of one Unix account, and why cancel rights are checked on the
office side only for what the socket can prove.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

import psutil

from elynav_nb.office.rights import USER

__all__ = ["TOKEN_VARIABLE", "AgentProcess", "Caller", "identify_caller", "peer_credentials"]

TOKEN_VARIABLE = "ELYNAV_OFFICE_TOKEN"
_MAX_ANCESTORS = 64


@dataclass(frozen=True)
class AgentProcess:
    """One agent CLI process started by the office: its pid, start time and agent name."""

    pid: int
    create_time: float
    agent: str


@dataclass(frozen=True)
class Caller:
    """``name`` is an agent name or ``"user"``; ``via`` says how it was known."""

    name: str
    via: str  # "ancestry", "token" or "none"
    pid: int | None = None

    @property
    def is_user(self) -> bool:
        return self.name == USER


def peer_credentials(connection: socket.socket) -> tuple[int, int]:
    """``(pid, uid)`` of the process at the other end of a Unix socket (Linux ``SO_PEERCRED``)."""
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


def identify_caller(pid: int, agent_processes: list[AgentProcess], tokens: dict[str, str]) -> Caller:
    """The caller behind ``pid``: by ancestry first, by the token in its environment next, else the user."""
    by_pid = {process.pid: process for process in agent_processes}
    try:
        peer = psutil.Process(pid)
    except psutil.Error:
        return Caller(USER, "none", pid)
    current: psutil.Process | None = peer
    for _ in range(_MAX_ANCESTORS):
        if current is None:
            break
        try:
            candidate = by_pid.get(current.pid)
            if candidate is not None and abs(current.create_time() - candidate.create_time) < 0.01:
                return Caller(candidate.agent, "ancestry", pid)
            current = current.parent()
        except psutil.Error:
            break
    try:
        token = peer.environ().get(TOKEN_VARIABLE, "")
    except psutil.Error:
        token = ""
    if token:
        for agent, agent_token in tokens.items():
            if agent_token == token:
                return Caller(agent, "token", pid)
    return Caller(USER, "none", pid)
