"""``elynav cancel <ask-id>``: cancel an ask with the caller's own rights.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``, beside ``elynav ask`` (whose connection
helpers it uses). An agent may cancel only the asks it sent; the user (a terminal, which presents
the user token kept beside the office socket) may cancel any; a process the office cannot tell
is refused (``CALLER_UNKNOWN``). Anything else: ``NOT_ALLOWED`` on stderr, exit 2,
and nothing changes.

It needs the office's socket, as ``elynav ask`` does: ``$ELYNAV_OFFICE_SOCKET`` (set in the shell
of every agent the office starts) or ``--socket PATH`` (the office's ``socket_path``); without
either, ``OFFICE_UNREACHABLE`` says so, naming ``elynav cancel``.
"""

from __future__ import annotations

import argparse

from elynav_nb.office.ask_command import add_socket_option

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ask_id", help="the ask to cancel (printed by elynav ask on stderr)")
    add_socket_option(parser)


def run(args: argparse.Namespace) -> int:
    from elynav_nb.office.ask_command import connect, first_answer
    from elynav_nb.office.wire import encode_cancel_request
    from elynav_nb.office.workspace import presented_user_token

    with connect(args.socket, command="cancel") as connection:
        token = presented_user_token(args.socket)
        answer, _ = first_answer(connection, encode_cancel_request(args.ask_id, token=token))
    print(f"ask {answer.get('ask_id')}: {answer.get('status')}")
    return 0
