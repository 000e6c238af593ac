"""Kernel tools: the latency a tool call adds to a turn, ours against a stdio MCP server and claude-agent-sdk.

What is timed: one turn of the embedded claude stand-in (``elynav-claude-standin``) whose model asks for
one trivial tool (``add(a, b)``) and then answers; the stand-in calls the tool through a real MCP client,
so the figure is the round trip as the CLI sees it (tool asked -> result back in the conversation).
Each way is also timed with the same turn without a tool call; **added latency = tool turn - plain
turn**, medians over interleaved rounds (the machines here are noisy: read the ratios).

    ours     ``AgentRunner(tools=[add])``: the SDK MCP server ``kernel`` in this process, its messages on the
             stream-json pipe (``mcp_message`` control requests)
    stdio    the same runner without kernel tools, ``add`` served by a separate stdio MCP server process
             (the ``elynav mcp`` style: the ``mcp`` SDK's ``MCPServer`` over stdio, listed in ``.mcp.json``)
    sdk      claude-agent-sdk's ``ClaudeSDKClient`` with ``create_sdk_mcp_server(tools=[add])`` (its
             in-process server, through ``mcp``'s in-memory transport), driving the same stand-in

Targets (issue 19): ours <= 0.5x the stdio server's added latency, <= 1x the SDK's.

The second table times the ``df_tools`` query tool on the 1M-row activities frame of ``crm_frames.py``
(``--rows``) against ``frame.query`` directly: see ``frame_tools.py`` for the full grid; here one
expression, through the tool's whole call path (``KernelToolSet.call``: checks, evaluation, JSON bound).

    python benchmarks/kernel_tools.py [--rounds 15] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

CALL = '@standin mcp kernel add {"a": 2, "b": 3}'
TIMINGS_VARIABLE = "ELYNAV_STANDIN_TOOL_TIMINGS"
PLAIN = "Bonjour"

STDIO_SERVER = textwrap.dedent(
    '''
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("kernel")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    server.run("stdio")
    '''
)


def standin_command() -> str:
    beside = Path(sys.executable).parent / "elynav-claude-standin"
    found = str(beside) if beside.is_file() else shutil.which("elynav-claude-standin")
    if not found:
        raise SystemExit("elynav-claude-standin is not installed (pip install -e .)")
    return found


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def time_turns(send: Any, rounds: int) -> dict[str, list[float]]:
    """Interleaved plain and tool turns through ``send(prompt)``: seconds of each."""
    times: dict[str, list[float]] = {"plain": [], "tool": []}
    await send(PLAIN)  # warm: the first turn pays the imports
    await send(CALL)
    for _ in range(rounds):
        for kind, prompt in (("plain", PLAIN), ("tool", CALL)):
            started = time.perf_counter()
            await send(prompt)
            times[kind].append(time.perf_counter() - started)
    return times


async def time_runner_turns(runner: Any, rounds: int) -> dict[str, list[float]]:
    """``time_turns`` through an ``AgentRunner``, each turn checked (the tool turn must show the sum)."""

    async def send(prompt: str) -> None:
        result = await runner.send(prompt)
        assert result.ok, result.error
        if prompt == CALL:
            assert "returned: 5" in result.text, result.text

    return await time_turns(send, rounds)


async def measure_ours(workspace: Path, rounds: int, standin: str, timings: Path) -> dict[str, list[float]]:
    from elynav_nb.agents import AgentRunner
    from elynav_nb.agents.tools import agent_tool

    environment = {TIMINGS_VARIABLE: str(timings)}
    tools = [agent_tool(add)]
    async with AgentRunner(
        None, workspace, executable=standin, tools=tools, environment=environment
    ) as runner:
        return await time_runner_turns(runner, rounds)


async def measure_stdio(workspace: Path, rounds: int, standin: str, timings: Path) -> dict[str, list[float]]:
    from elynav_nb.agents import AgentRunner

    script = workspace / "add_server.py"
    script.write_text(STDIO_SERVER)
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"kernel": {"command": sys.executable, "args": [str(script)]}}})
    )
    options: dict[str, Any] = {
        "extra_arguments": ["--allowedTools", "mcp__kernel__add"],
        "environment": {TIMINGS_VARIABLE: str(timings)},
    }
    async with AgentRunner(None, workspace, executable=standin, **options) as runner:
        return await time_runner_turns(runner, rounds)


async def measure_sdk(workspace: Path, rounds: int, standin: str, timings: Path) -> dict[str, list[float]]:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, create_sdk_mcp_server, tool
    from claude_agent_sdk.types import AssistantMessage, ResultMessage, TextBlock

    @tool("add", "Add two integers.", {"a": int, "b": int})
    async def sdk_add(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}

    options = ClaudeAgentOptions(
        cli_path=standin,
        cwd=str(workspace),
        mcp_servers={"kernel": create_sdk_mcp_server("kernel", tools=[sdk_add])},
        allowed_tools=["mcp__kernel__add"],
        env={TIMINGS_VARIABLE: str(timings)},
    )
    async with ClaudeSDKClient(options=options) as client:

        async def send(prompt: str) -> None:
            await client.query(prompt)
            text = ""
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    text += "".join(block.text for block in message.content if isinstance(block, TextBlock))
                if isinstance(message, ResultMessage):
                    assert not message.is_error, message.result
            if prompt == CALL:
                assert "returned: 5" in text, text

        return await time_turns(send, rounds)


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def frame_query_table(rows: int) -> list[str]:
    import numpy
    import pandas

    from elynav_nb.agents.tools import df_tools

    generator = numpy.random.default_rng(7)
    frame = pandas.DataFrame(
        {
            "account_id": generator.integers(0, 100_000, rows),
            "kind": generator.choice(["call", "email", "meeting", "note"], rows),
            "amount": generator.gamma(2.0, 50.0, rows).round(2),
        }
    )
    expression = "amount > 700 and kind == 'meeting'"
    tools = df_tools(frame, name="activities")

    async def tool_call() -> tuple[float, int]:
        started = time.perf_counter()
        outcome = await tools.call("activities_query", {"expression": expression})
        assert not outcome.is_error, outcome.content
        return time.perf_counter() - started, len(outcome.content.encode())

    tool_times, direct_times = [], []
    tool_bytes = direct_bytes = 0
    for _ in range(7):
        seconds, tool_bytes = asyncio.run(tool_call())
        tool_times.append(seconds)
        started = time.perf_counter()
        direct = frame.query(expression, engine="python")
        direct_times.append(time.perf_counter() - started)
        direct_bytes = int(direct.memory_usage(deep=True).sum())
    ours, peer = median_ms(tool_times), median_ms(direct_times)
    return [
        f"frame query on {rows:,} rows: {expression}",
        "| way | median ms | result bytes |",
        "|---|---|---|",
        f"| `activities_query` tool (call path, <= 50 rows + count, JSON) | {ours:.1f} | {tool_bytes:,} |",
        f"| `frame.query` direct (python engine), result frame | {peer:.1f} | {direct_bytes:,} |",
        f"ratio {ours / peer:.2f}x",
    ]


async def main_async(arguments: argparse.Namespace) -> None:
    standin = standin_command()
    ways = {"ours": measure_ours, "stdio": measure_stdio, "sdk": measure_sdk}
    results: dict[str, dict[str, list[float]]] = {}
    round_trips: dict[str, list[float]] = {}
    for name, measure in ways.items():
        with tempfile.TemporaryDirectory(prefix=f"kernel-tools-{name}-") as folder:
            timings = Path(folder) / "timings.jsonl"
            results[name] = await measure(Path(folder), arguments.rounds, standin, timings)
            lines = timings.read_text().splitlines()[1:]  # the warm-up call is left out
            round_trips[name] = [json.loads(line)["seconds"] for line in lines]
    added = {name: median_ms(times["tool"]) - median_ms(times["plain"]) for name, times in results.items()}
    trip = {name: median_ms(values) for name, values in round_trips.items()}
    print(f"kernel tool call, {arguments.rounds} interleaved rounds per way (medians, ms)")
    print(
        "| way | round trip as the CLI sees it (tools/call -> result) | plain turn | tool turn | added to the turn |"
    )
    print("|---|---|---|---|---|")
    for name, times in results.items():
        print(
            f"| {name} | {trip[name]:.2f} | {median_ms(times['plain']):.1f} | {median_ms(times['tool']):.1f}"
            f" | {added[name]:.1f} |"
        )
    print(
        f"round trip: ours / stdio {trip['ours'] / trip['stdio']:.2f}x (target <= 0.5x),"
        f" ours / sdk {trip['ours'] / trip['sdk']:.2f}x (target <= 1x);"
        f" added to the turn: ours / stdio {added['ours'] / added['stdio']:.2f}x, ours / sdk {added['ours'] / added['sdk']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--rows", type=int, default=1_000_000)
    arguments = parser.parse_args()
    asyncio.run(main_async(arguments))
    print()
    print("\n".join(frame_query_table(arguments.rows)))


if __name__ == "__main__":
    main()
