"""``elynav sandbox docs --port N``: run the local Docs stand-in in the foreground.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments; ``run``
starts ``DocsSandbox`` and serves until Ctrl-C. It prints the instance URL, a demo document link and
the environment lines another process (a notebook, ``elynav mcp docs``) needs to connect. The
session it prints is a throwaway of this local sandbox, minted at start and gone at exit.
"""

from __future__ import annotations

import argparse
import asyncio

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8071, help="port to listen on (default: %(default)s)")
    parser.add_argument(
        "--api-version",
        type=int,
        choices=(4, 5),
        default=5,
        help="Docs REST flavour to imitate (default: %(default)s)",
    )
    parser.add_argument(
        "--throttle",
        type=int,
        default=80,
        metavar="PER_MINUTE",
        help="document requests allowed per minute and user (default: %(default)s)",
    )
    parser.add_argument(
        "--hocuspocus",
        type=int,
        choices=(3, 4),
        default=3,
        help="Hocuspocus major version to imitate on the collaboration socket (default: %(default)s)",
    )
    parser.add_argument(
        "--collaboration-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="with --hocuspocus 4: idle close (4408) delay (default: %(default)s)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not create the demo document")


async def _serve(args: argparse.Namespace) -> None:
    from elynav_nb.sandbox.docs.server import DocsSandbox

    sandbox = DocsSandbox(
        host=args.host,
        port=args.port,
        api_version=args.api_version,
        throttle_per_minute=args.throttle,
        hocuspocus_version=args.hocuspocus,
        collaboration_timeout=args.collaboration_timeout,
    )
    async with sandbox:
        print(f"Docs sandbox listening on {sandbox.url} (Ctrl-C to stop)")
        if not args.no_demo:
            demo = sandbox.create_document("Demo document", link_reach="public", link_role="editor")
            print(f"demo document (public, editable by link): {sandbox.document_link(demo.id)}")
        print(f"export DOCS_INSTANCE_URL={sandbox.url}")
        print(f"export DOCS_SESSION_ID={sandbox.session_id}")
        print(f"export DOCS_CSRF_TOKEN={sandbox.csrf_token}")
        print(f"collaboration API key (reset-connections): {sandbox.api_key}", flush=True)
        while True:
            await asyncio.sleep(3600)


def run(args: argparse.Namespace) -> int:
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 0
    return 0
