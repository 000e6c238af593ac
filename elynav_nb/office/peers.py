"""Who is calling the office socket, decided without trusting what the caller says; refused when unknown.

Where it sits: ``office/socket_server.py`` calls ``identify_caller`` once per request; the office
then applies its rights and cascade rules to that name. Nothing here fails open: a caller is
identified, or refused with ``CALLER_UNKNOWN``.

How it decides:

1. The kernel tells the peer's pid and uid (``SO_PEERCRED``); another uid is refused.
2. The processes that hold the caller's end of the connection: the one that connected, while it
   lives (a pid reused since, by a process born after the connection, does not count); when it has
   exited (it forked and its parent left), the live processes that hold that socket now, found by
   the socket's peer inode (``sock_diag``) in ``/proc/<pid>/fd``.
3. The office's own process holding it is the user: that process holds the office.
4. For each holder, its ancestors are walked (parent links, each checked with its start time so a
   reused pid never matches): one that is an agent CLI started by this office names the caller.
   ``elynav ask`` run by agent C's Bash tool descends from C's CLI, whatever it passes or sets.
5. Else the office token in a holder's own environment (read from ``/proc``, not from the request)
   names the agent it was given to: a tool whose CLI was killed, or a child that forked away.
6. Else the user token given with the request (``elynav ask`` from a terminal, a kernel attached to
   the office, ``elynav acp``: read from the office's private socket folder) makes it the user.
7. Else ``CALLER_UNKNOWN``: refused, nothing queued or cancelled.

An agent is found before any user token counts: an agent's process that read the user token
stays that agent. A same-uid process that deliberately leaves its agent's tree, drops its token
*and* reads the user token file can pass for the user: that is the limit of one Unix account.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import psutil

from elynav_nb.errors import CallerUnknown
from elynav_nb.office.rights import USER

__all__ = [
    "TOKEN_VARIABLE",
    "AgentProcess",
    "Caller",
    "caller_processes",
    "identify_caller",
    "peer_credentials",
    "socket_holders",
]

TOKEN_VARIABLE = "ELYNAV_OFFICE_TOKEN"
_MAX_ANCESTORS = 64
_MAX_HOLDERS = 16
# sock_diag (linux/sock_diag.h, linux/unix_diag.h)
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_UDIAG_SHOW_PEER = 0x4
_UNIX_DIAG_PEER = 2
_NLM_F_REQUEST = 1


@dataclass(frozen=True)
class AgentProcess:
    """One agent CLI process started by the office: its pid, start time and agent name."""

    pid: int
    create_time: float
    agent: str


@dataclass(frozen=True)
class Caller:
    """``name`` is an agent name or ``"user"``; ``via`` says how it was known.

    ``via``: ``"office"`` (the office's own process), ``"ancestry"``, ``"token"`` (an agent's token in
    its environment) or ``"user-token"`` (the user token given with the request)."""

    name: str
    via: str
    pid: int | None = None

    @property
    def is_user(self) -> bool:
        return self.name == USER


def peer_credentials(connection: socket.socket) -> tuple[int, int]:
    """``(pid, uid)`` of the process at the other end of a Unix socket (Linux ``SO_PEERCRED``)."""
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


def socket_holders(connection: socket.socket) -> list[int]:
    """The live processes of this uid that hold the other end of ``connection`` (``[]`` when unknown)."""
    peer_inode = _peer_inode(os.fstat(connection.fileno()).st_ino)
    if peer_inode is None:
        return []
    wanted = f"socket:[{peer_inode}]"
    holders: list[int] = []
    uid = os.getuid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid != uid:
                continue
            for descriptor in os.scandir(f"/proc/{entry.name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(descriptor.path) == wanted:
                        holders.append(int(entry.name))
                        break
        if len(holders) >= _MAX_HOLDERS:
            break
    return holders


def _peer_inode(inode: int) -> int | None:
    """The inode of the other end of the Unix socket ``inode`` (netlink ``sock_diag``), or None."""
    no_cookie = 0xFFFFFFFF
    request = struct.pack(
        "=BBHIIIII", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, inode, _UDIAG_SHOW_PEER, no_cookie, no_cookie
    )
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as netlink:
            netlink.settimeout(1.0)
            netlink.send(header + request)
            data = netlink.recv(65536)
    except (OSError, AttributeError):  # no netlink here (another OS, a sandbox): unknown
        return None
    if len(data) < 32:
        return None
    length, message_type = struct.unpack("=IH", data[:6])
    if message_type != _SOCK_DIAG_BY_FAMILY:
        return None
    body = data[16:length]
    offset = 16  # struct unix_diag_msg
    while offset + 4 <= len(body):
        attribute_length, attribute_type = struct.unpack("=HH", body[offset : offset + 4])
        if attribute_length < 4:
            break
        if attribute_type == _UNIX_DIAG_PEER and attribute_length >= 8:
            return int(struct.unpack("=I", body[offset + 4 : offset + 8])[0])
        offset += (attribute_length + 3) & ~3
    return None


def caller_processes(pid: int, connected_at: float) -> list[int]:
    """``[pid]`` while the process that connected lives (not a zombie, not a later process given its
    pid), else ``[]``. ``create_time`` is read from boot time plus clock ticks: a second of margin."""
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        if process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= connected_at + 1.0:
            return [pid]
    return []


def identify_caller(
    holders: Sequence[int],
    agent_processes: Sequence[AgentProcess],
    tokens: dict[str, str],
    *,
    user_token: str = "",
    presented_token: str = "",
    office_pid: int | None = None,
) -> Caller:
    """The caller behind ``holders`` (see the module docstring), or ``CALLER_UNKNOWN``."""
    by_pid = {process.pid: process for process in agent_processes}
    office_pid = os.getpid() if office_pid is None else office_pid
    for pid in holders:
        if pid == office_pid:
            return Caller(USER, "office", pid)
        agent = _agent_ancestor(pid, by_pid)
        if agent:
            return Caller(agent, "ancestry", pid)
    for pid in holders:
        try:
            token = psutil.Process(pid).environ().get(TOKEN_VARIABLE, "")
        except psutil.Error:
            token = ""
        for agent, agent_token in tokens.items():
            if token and agent_token == token:
                return Caller(agent, "token", pid)
    first = holders[0] if holders else None
    if user_token and presented_token and _same(presented_token, user_token):
        return Caller(USER, "user-token", first)
    raise CallerUnknown(
        "the office could not tell who is calling: the process is no agent of this office and gave no user "
        "token (elynav ask from a terminal reads it beside the office socket)"
        if holders
        else "the office could not tell who is calling: the calling process has gone",
        details={"pid": first},
    )


def _agent_ancestor(pid: int, by_pid: dict[int, AgentProcess]) -> str:
    """The agent whose CLI is ``pid`` or one of its ancestors ("" when none)."""
    try:
        current: psutil.Process | None = psutil.Process(pid)
    except psutil.Error:
        return ""
    for _ in range(_MAX_ANCESTORS):
        if current is None:
            return ""
        try:
            candidate = by_pid.get(current.pid)
            if candidate is not None and abs(current.create_time() - candidate.create_time) < 0.01:
                return candidate.agent
            current = current.parent()
        except psutil.Error:
            return ""
    return ""


def _same(presented: str, expected: str) -> bool:
    return hmac.compare_digest(presented.encode("utf-8", "replace"), expected.encode("utf-8"))
