"""The command modules behind ``elynav sandbox docs`` and ``elynav mcp docs``."""

from __future__ import annotations

import argparse
import subprocess
import sys

import httpx

from elynav_nb.docs import command as mcp_docs_command


def test_sandbox_docs_command_serves_and_prints_how_to_connect() -> None:
    script = (
        "import argparse, sys\n"
        "from elynav_nb.sandbox.docs import command as docs_command\n"
        "parser = argparse.ArgumentParser(); docs_command.configure(parser)\n"
        "sys.exit(docs_command.run(parser.parse_args(['--port', '0'])))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline()
        assert first_line.startswith("Docs sandbox listening on http://127.0.0.1:")
        url = first_line.split(" on ")[1].split(" ")[0]
        assert httpx.get(f"{url}/api/v1.0/config/", timeout=10).json()["RELEASE_VERSION"] == "v5.4.1"
        assert "demo document" in process.stdout.readline()
        assert process.stdout.readline().strip() == f"export DOCS_INSTANCE_URL={url}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_mcp_docs_command_takes_the_instance_but_never_a_secret() -> None:
    parser = argparse.ArgumentParser()
    mcp_docs_command.configure(parser)
    arguments = parser.parse_args(["--instance", "https://docs.example.org"])
    assert arguments.instance == "https://docs.example.org"
    option_names = [option for action in parser._actions for option in action.option_strings]
    assert not any("session" in name or "csrf" in name or "cookie" in name for name in option_names)
