"""``elynav ask <agent> <text>`` and ``elynav cancel <ask-id>``: how an agent talks to another one.

Where it sits: entries of ``elynav_nb.cli.COMMANDS``, run by an agent's Bash tool (the rule
``Bash(elynav ask:*)`` in its definition) or by a person in a terminal. They reach the office of
the agent that runs them through ``$ELYNAV_OFFICE_SOCKET`` (set by the office in every agent
process) and say nothing about who they are: the office finds out from the socket.

``elynav ask`` blocks until the reply, prints the reply text on stdout and exits with the outcome.
With ``--schema FILE`` (a JSON Schema file) the answer is structured: the office validates it
(``office.ask(..., output_schema=)``) and stdout holds the validated JSON, one line; an answer that
does not match ends ``failed`` (exit 1, ``OUTPUT_INVALID`` on stderr, the raw answer after the
partial-reply line); a file that is not a JSON Schema is refused (exit 2, ``INVALID_INPUT``).

    0  done          the reply text is on stdout
    1  failed        the diagnostic is on stderr
    3  cancelled     by the user or the caller (stderr says who)
    4  timeout       the ask's bound ran out
    2  refused       a typed error, ``CODE: message`` on stderr (DEADLOCK, AGENT_NOT_FOUND, NOT_ALLOWED...)
    130 interrupted  the ask is cancelled by the office when this process goes away

Its ask id goes to stderr first (``elynav ask: ask <id> to <agent>``), for ``elynav cancel``.

Stdout holds a complete reply or nothing. When the ask did not end ``done`` (exit 1, 3 or 4), the
text the agent had written so far is cut off: it goes to stderr, after the line
``elynav ask: partial reply (<outcome>), not an answer:``, and stdout stays empty, so a caller that
reads stdout never takes half a sentence for the answer. ``--timeout`` takes a positive, finite
number of seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["EXIT_CODES", "PARTIAL_REPLY_HEADER", "configure", "positive_seconds", "read_schema_file", "run"]

EXIT_CODES = {"done": 0, "failed": 1, "cancelled": 3, "timeout": 4}
PARTIAL_REPLY_HEADER = "elynav ask: partial reply ({outcome}), not an answer:"
"""The stderr line before the cut-off text of an ask that did not end ``done`` (stdout stays empty)."""

_EPILOG = """\
exit status: 0 done (the whole reply on stdout), 1 failed, 3 cancelled, 4 timeout,
2 refused (CODE: message on stderr), 130 interrupted.
stdout holds a complete reply or nothing: when the ask does not end done, the text
written so far goes to stderr after the line
  elynav ask: partial reply (<outcome>), not an answer:
and stdout stays empty. The ask id is on stderr first, for `elynav cancel ID`."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("agent", help="the agent to ask (e.g. elynav-sdr)")
    parser.add_argument(
        "text", nargs="+", help="what to ask (several words are joined; '-' reads standard input)"
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="bound on the whole ask, a positive number of seconds (default: the office's)",
    )
    parser.add_argument(
        "--schema",
        default=None,
        metavar="FILE",
        help="a JSON Schema file: the answer is validated against it and printed as JSON on stdout",
    )
    add_socket_option(parser)


def read_schema_file(path: str) -> dict[str, Any]:
    """The JSON Schema in ``path`` (``INVALID_INPUT`` for a file that cannot be read or is no JSON object);
    the office checks the schema itself."""
    from elynav_nb.errors import InvalidInput

    try:
        with open(path, encoding="utf-8") as handle:
            schema = json.load(handle)
    except OSError as error:
        raise InvalidInput(f"--schema {path}: {error.strerror}") from None
    except ValueError as error:
        raise InvalidInput(f"--schema {path} is not JSON: {error}") from None
    if not isinstance(schema, dict):
        raise InvalidInput(f"--schema {path} must hold a JSON object (a JSON Schema)")
    return schema


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (``-5``, ``0``, ``nan``, ``inf`` refused)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a positive, finite number of seconds, e.g. 600")
    return seconds


def add_socket_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--socket",
        default=None,
        metavar="PATH",
        help="the office socket (default: $ELYNAV_OFFICE_SOCKET, set in every agent the office starts)",
    )


def connect(socket_path: str | None, *, command: str = "ask") -> socket.socket:
    """A connection to the office, or ``OFFICE_UNREACHABLE`` saying why there is none.

    ``command`` (``ask`` or ``cancel``) is the command named in the message."""
    from elynav_nb.errors import OfficeUnreachable
    from elynav_nb.office.wire import SOCKET_VARIABLE

    path = socket_path or os.environ.get(SOCKET_VARIABLE)
    if not path:
        raise OfficeUnreachable(
            f"no office to talk to: ${SOCKET_VARIABLE} is not set. elynav {command} needs the office's "
            f"socket: run it inside the shell of an agent the office started (the office sets "
            f"${SOCKET_VARIABLE} there), or pass --socket PATH with the office's socket path "
            "(office.socket_path in the notebook that runs the office)",
            details={"variable": SOCKET_VARIABLE},
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
    from elynav_nb.office.workspace import presented_user_token

    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    schema = read_schema_file(args.schema) if args.schema is not None else None
    connection = connect(args.socket)
    with connection:
        token = presented_user_token(args.socket)  # a terminal's; an agent's process presents none
        accepted, stream = first_answer(
            connection, encode_ask_request(args.agent, text, args.timeout, schema, token=token)
        )
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
            text = str(answer.get("text") or "")
            if outcome == "done":
                if schema is not None:
                    print(json.dumps(answer.get("data"), ensure_ascii=False), flush=True)
                elif text:
                    print(text, flush=True)
                return 0
            who = f" by {answer['cancelled_by']}" if answer.get("cancelled_by") else ""
            print(
                f"elynav ask: {outcome}{who}: {answer.get('error_code')}: {answer.get('error')}",
                file=sys.stderr,
            )
            if text:  # cut off: never on stdout, where it would pass for the answer
                print(PARTIAL_REPLY_HEADER.format(outcome=outcome), file=sys.stderr)
                print(text, file=sys.stderr, flush=True)
            return EXIT_CODES.get(outcome, 1)
    raise OfficeUnreachable("the office closed the connection before the reply (it may have stopped)")
