"""``elynav ask <agent> <text>`` and ``elynav cancel <ask-id>``: how an agent talks to another one.

Where it sits: entries of ``elynav_nb.cli.COMMANDS``, run by an agent's Bash tool (the rule
``Bash(elynav ask:*)`` in its definition) or by a person in a terminal. They reach the office of
the agent that runs them through ``$ELYNAV_OFFICE_SOCKET`` (set by the office in every agent
process) and say nothing about who they are: the office finds out from the socket.

``elynav ask`` blocks until the reply, prints the reply text on stdout and exits with the outcome:

    0  done          the reply text is on stdout
    1  failed        the diagnostic is on stderr
    3  cancelled     by the user or the caller (stderr says who)
    4  timeout       the ask's bound ran out
    2  refused       a typed error, ``CODE: message`` on stderr (DEADLOCK, AGENT_NOT_FOUND, NOT_ALLOWED...)
    130 interrupted  the ask is cancelled by the office when this process goes away

Its ask id goes to stderr first (``elynav ask: ask <id> to <agent>``), for ``elynav cancel``.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["EXIT_CODES", "configure", "run"]

EXIT_CODES = {"done": 0, "failed": 1, "cancelled": 3, "timeout": 4}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", help="the agent to ask (e.g. elynav-sdr)")
    parser.add_argument(
        "text", nargs="+", help="what to ask (several words are joined; '-' reads standard input)"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="bound on the whole ask"
    )
    add_socket_option(parser)


def add_socket_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--socket",
        default=None,
        metavar="PATH",
        help="the office socket (default: $ELYNAV_OFFICE_SOCKET, set in every agent the office starts)",
    )


def connect(socket_path: str | None) -> socket.socket:
    """A connection to the office, or ``OFFICE_UNREACHABLE`` saying why there is none."""
    from elynav_nb.errors import OfficeUnreachable
    from elynav_nb.office.wire import SOCKET_VARIABLE

    path = socket_path or os.environ.get(SOCKET_VARIABLE)
    if not path:
        raise OfficeUnreachable(
            f"no office to talk to: ${SOCKET_VARIABLE} is not set (elynav ask runs inside an agent started by "
            "an Office; from a terminal pass --socket with office.socket_path)"
        )
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError as error:
        connection.close()
        raise OfficeUnreachable(
            f"the office at {path} does not answer ({error.strerror}); it may have stopped"
        ) from None
    return connection


def answers(connection: socket.socket) -> Iterator[dict[str, Any]]:
    """The office's answer lines, decoded, until it closes the connection."""
    from elynav_nb.office.wire import decode_answer

    with connection.makefile("rb") as stream:
        for line in stream:
            yield decode_answer(line)


def first_answer(
    connection: socket.socket, request: bytes
) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """Send ``request``; the first answer (an ``error`` answer is raised as its typed error) and the rest."""
    from elynav_nb.errors import OfficeUnreachable
    from elynav_nb.office.wire import error_from_answer

    connection.sendall(request)
    stream = answers(connection)
    answer = next(stream, None)
    if answer is None:
        raise OfficeUnreachable("the office closed the connection without answering")
    if answer["type"] == "error":
        raise error_from_answer(answer)
    return answer, stream


def run(args: argparse.Namespace) -> int:
    from elynav_nb.errors import OfficeUnreachable
    from elynav_nb.office.wire import encode_ask_request, error_from_answer

    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    connection = connect(args.socket)
    with connection:
        accepted, stream = first_answer(connection, encode_ask_request(args.agent, text, args.timeout))
        print(
            f"elynav ask: ask {accepted.get('ask_id')} to {accepted.get('agent')}",
            file=sys.stderr,
            flush=True,
        )
        for answer in stream:
            if answer["type"] == "error":
                raise error_from_answer(answer)
            if answer["type"] != "reply":
                continue
            outcome = str(answer.get("outcome"))
            if answer.get("text"):
                print(answer["text"], flush=True)
            if outcome != "done":
                who = f" by {answer['cancelled_by']}" if answer.get("cancelled_by") else ""
                print(
                    f"elynav ask: {outcome}{who}: {answer.get('error_code')}: {answer.get('error')}",
                    file=sys.stderr,
                )
            return EXIT_CODES.get(outcome, 1)
    raise OfficeUnreachable("the office closed the connection before the reply (it may have stopped)")
