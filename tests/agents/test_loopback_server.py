"""The loopback MCP server alone: a real MCP client (the ``mcp`` SDK over streamable HTTP), the secret, the guards, the sockets."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pandas
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from elynav_nb.agents.tools import agent_tool, df_tools, kernel_tools
from elynav_nb.agents.tools.loopback_server import LoopbackMcpServer
from elynav_nb.agents.tools.mcp_endpoint import McpToolEndpoint

pytestmark = pytest.mark.anyio

STATE = {"counter": 0}


@agent_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@agent_tool
def explode(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"no way: {reason}")


@agent_tool
async def read_counter() -> int:
    """The counter as it is now."""
    return STATE["counter"]


def _server(*tools: object, **options: object) -> LoopbackMcpServer:
    return LoopbackMcpServer(McpToolEndpoint(kernel_tools(*tools)), **options)  # type: ignore[arg-type]


@asynccontextmanager
async def _mcp_client(server: LoopbackMcpServer, secret: str | None = None) -> AsyncIterator[Client]:
    token = server.secret if secret is None else secret
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
            yield client


def _headers(server: LoopbackMcpServer, **extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {server.secret}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **extra,
    }


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _our_sockets_on(port: int) -> list[object]:
    return [
        connection
        for connection in psutil.Process(os.getpid()).net_connections(kind="tcp")
        if (connection.laddr and connection.laddr.port == port)
        or (connection.raddr and connection.raddr.port == port)
    ]


async def test_a_real_mcp_client_lists_and_calls_the_kernel_tools() -> None:
    frame = pandas.DataFrame({"name": ["Girard", "Moreau", "Petit"], "score": [3, 9, 5]})
    async with _server(add, explode, df_tools(frame, name="accounts")) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        async with _mcp_client(server) as client:
            listed = await client.list_tools()
            names = [tool.name for tool in listed.tools]
            assert {"add", "explode", "accounts_query", "accounts_describe"} <= set(names)
            summed = await client.call_tool("add", {"a": 2, "b": 40})
            assert not summed.is_error and summed.content[0].text == "42"  # type: ignore[union-attr]
            failed = await client.call_tool("explode", {"reason": "test"})
            assert failed.is_error
            text = failed.content[0].text  # type: ignore[union-attr]
            assert "ValueError" in text and "no way: test" in text and server.secret not in text
            queried = await client.call_tool("accounts_query", {"expression": "score > 4"})
            assert not queried.is_error and "Moreau" in queried.content[0].text  # type: ignore[union-attr]
        assert server.endpoint.calls == 3
        assert not server.rules.sessions, "the client's DELETE ended its session"


async def test_a_tool_sees_the_object_as_it_is_now_while_another_coroutine_runs() -> None:
    STATE["counter"] = 0
    stop = asyncio.Event()

    async def keep_counting() -> None:
        while not stop.is_set():
            STATE["counter"] += 1
            await asyncio.sleep(0.001)

    async with _server(read_counter) as server:
        counting = asyncio.create_task(keep_counting())
        async with _mcp_client(server) as client:
            await asyncio.sleep(0.05)
            first = int((await client.call_tool("read_counter", {})).content[0].text)  # type: ignore[union-attr]
            await asyncio.sleep(0.05)
            second = int((await client.call_tool("read_counter", {})).content[0].text)  # type: ignore[union-attr]
        stop.set()
        await counting
    assert 0 < first < second <= STATE["counter"]


async def test_two_servers_in_one_loop_each_with_its_own_tools_and_secret() -> None:
    @agent_tool(name="who")
    def who_a() -> str:
        """Who answers."""
        return "A"

    @agent_tool(name="who")
    def who_b() -> str:
        """Who answers."""
        return "B"

    async with _server(who_a) as first, _server(who_b) as second:
        assert first.port != second.port and first.secret != second.secret
        async with _mcp_client(first) as client_a, _mcp_client(second) as client_b:
            a, b = await asyncio.gather(client_a.call_tool("who", {}), client_b.call_tool("who", {}))
        assert a.content[0].text == "A" and b.content[0].text == "B"  # type: ignore[union-attr]
        async with httpx.AsyncClient() as http:  # one runner's secret does not open the other's server
            refused = await http.post(second.url, json=INITIALIZE, headers=_headers(first))
        assert refused.status_code == 401


async def test_no_secret_or_a_wrong_one_is_refused_before_any_tool_runs() -> None:
    async with _server(add) as server:
        async with httpx.AsyncClient() as http:
            missing = await http.post(server.url, json=INITIALIZE)
            wrong = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, Authorization="Bearer nope")
            )
            basic = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, Authorization="Basic eDp5")
            )
            get = await http.get(server.url)
        assert missing.status_code == wrong.status_code == basic.status_code == get.status_code == 401
        assert missing.headers["www-authenticate"] == "Bearer"
        assert server.secret not in missing.text + wrong.text
        with pytest.raises(Exception):
            async with _mcp_client(server, secret="not-the-secret") as client:
                await client.list_tools()
    assert server.endpoint.calls == 0


async def test_another_process_is_refused_without_the_secret_and_served_with_it() -> None:
    script = textwrap.dedent(
        """
        import json, sys, httpx
        url, token = sys.argv[1], sys.argv[2]
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            headers["Authorization"] = "Bearer " + token
        first = httpx.post(url, json=init, headers=headers)
        out = {"initialize": first.status_code}
        if first.status_code == 200:
            headers["Mcp-Session-Id"] = first.headers["mcp-session-id"]
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
            second = httpx.post(url, json=call, headers=headers)
            out["call"] = second.status_code
            out["text"] = second.json()["result"]["content"][0]["text"]
        print(json.dumps(out))
        """
    )
    async with _server(add) as server:
        results = []
        for token in ("", "guessed-" + "x" * 40, server.secret):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", script, server.url, token, stdout=subprocess.PIPE
            )
            output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
            results.append(json.loads(output))
    assert results[0] == {"initialize": 401} and results[1] == {"initialize": 401}
    assert results[2] == {"initialize": 200, "call": 200, "text": "3"}
    assert server.endpoint.calls == 1


async def test_dns_rebinding_hosts_and_web_origins_are_refused() -> None:
    async with _server(add) as server:
        async with httpx.AsyncClient() as http:
            rebound = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, Host=f"evil.example:{server.port}")
            )
            page = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, Origin="https://evil.example")
            )
            null_origin = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, Origin="null")
            )
            local_page = await http.post(
                server.url,
                json=INITIALIZE,
                headers=_headers(server, Origin=f"http://localhost:{server.port}"),
            )
            by_name = await http.post(
                f"http://localhost:{server.port}/mcp", json=INITIALIZE, headers=_headers(server)
            )
        assert rebound.status_code == page.status_code == null_origin.status_code == 403
        assert local_page.status_code == by_name.status_code == 200


async def test_the_transport_rules_sessions_notifications_get_delete_and_bad_bodies() -> None:
    async with _server(add) as server:
        async with httpx.AsyncClient() as http:

            def post(body: str, **headers: str) -> Any:
                return http.post(server.url, content=body, headers=_headers(server, **headers))

            init = await post(json.dumps(INITIALIZE))
            session = init.headers["mcp-session-id"]
            assert init.status_code == 200 and init.headers["content-type"] == "application/json"
            assert init.json()["result"]["protocolVersion"] == "2025-06-18"
            listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            assert (await post(listing)).status_code == 400  # no session id
            assert (await post(listing, **{"Mcp-Session-Id": "made-up"})).status_code == 404
            assert (await post(listing, **{"Mcp-Session-Id": session})).json()["result"]["tools"][0][
                "name"
            ] == "add"
            version = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "1999-01-01"}
            assert (await post(listing, **version)).status_code == 400
            notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            accepted = await post(notification, **{"Mcp-Session-Id": session})
            assert accepted.status_code == 202 and accepted.content == b""
            batch = json.dumps([json.loads(listing), {"jsonrpc": "2.0", "method": "notifications/x"}])
            answered = await post(batch, **{"Mcp-Session-Id": session})
            assert isinstance(answered.json(), list) and len(answered.json()) == 1
            assert (await post("{not json", **{"Mcp-Session-Id": session})).json()["error"]["code"] == -32700
            assert (
                await post(listing, **{"Content-Type": "text/plain", "Mcp-Session-Id": session})
            ).status_code == 415
            get = await http.get(server.url, headers=_headers(server))
            assert get.status_code == 405 and "POST" in get.headers["allow"]
            elsewhere = await http.post(
                server.url.replace("/mcp", "/other"), content=listing, headers=_headers(server)
            )
            assert elsewhere.status_code == 404
            deleted = await http.delete(server.url, headers=_headers(server, **{"Mcp-Session-Id": session}))
            assert deleted.status_code == 204
            assert (await post(listing, **{"Mcp-Session-Id": session})).status_code == 404


async def test_oversized_bodies_and_heads_are_refused_and_the_connection_closed() -> None:
    async with _server(add, max_body_bytes=1024, max_header_bytes=2048) as server:
        async with httpx.AsyncClient() as http:
            big = await http.post(server.url, content=b"x" * 4096, headers=_headers(server))
            chunked = await http.post(server.url, content=_chunks(b"y" * 512, 8), headers=_headers(server))
            huge_head = await http.post(
                server.url, json=INITIALIZE, headers=_headers(server, **{"X-Pad": "z" * 4096})
            )
        assert big.status_code == chunked.status_code == 413
        assert huge_head.status_code == 431
        assert server.endpoint.calls == 0


async def _chunks(data: bytes, count: int) -> AsyncIterator[bytes]:
    for _ in range(count):
        yield data


async def test_a_slow_request_is_cut_by_the_read_timeout() -> None:
    async with _server(add, read_timeout=0.3) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=5)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408")


async def test_keep_alive_then_stop_closes_every_socket_and_the_port_refuses() -> None:
    server = _server(add)
    await server.start()
    port = server.port
    http = httpx.AsyncClient()
    try:
        first = await http.post(server.url, json=INITIALIZE, headers=_headers(server))
        second = await http.post(server.url, json=INITIALIZE, headers=_headers(server))
        assert first.status_code == second.status_code == 200
        assert server.open_connections == 1, "both requests went over one kept-alive connection"
        assert _our_sockets_on(port)
        await server.stop()
        assert server.open_connections == 0 and not server.is_serving and server.url == ""
        await asyncio.sleep(0.05)
        left = [
            c for c in _our_sockets_on(port) if c.status not in (psutil.CONN_TIME_WAIT, psutil.CONN_CLOSE)
        ]  # type: ignore[attr-defined]
        # the client's end of the closed connection may linger until it reads the FIN: only ours count
        ours = [c for c in left if c.laddr.port == port]  # type: ignore[attr-defined]
        assert not ours, f"sockets of the server left open: {ours}"
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        await http.aclose()
        await server.stop()


async def test_stop_cancels_a_call_in_flight() -> None:
    started = asyncio.Event()

    @agent_tool
    async def wait_forever() -> str:
        """Never ends."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    server = _server(wait_forever)
    await server.start()
    async with httpx.AsyncClient() as http:
        init = await http.post(server.url, json=INITIALIZE, headers=_headers(server))
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "wait_forever", "arguments": {}},
        }
        pending = asyncio.ensure_future(
            http.post(
                server.url,
                json=call,
                headers=_headers(server, **{"Mcp-Session-Id": init.headers["mcp-session-id"]}),
            )
        )
        await asyncio.wait_for(started.wait(), timeout=10)
        await asyncio.wait_for(server.stop(), timeout=5)
        with pytest.raises(httpx.HTTPError):
            await asyncio.wait_for(pending, timeout=5)
    assert server.open_connections == 0


async def test_idle_sockets_without_the_secret_cannot_starve_the_clis_calls() -> None:
    """Issue 28 item 5: 64 idle sockets once reset every later connection, the CLI's own included."""
    async with _server(add) as server:
        idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(150)]
        try:
            await asyncio.sleep(0.1)  # all accepted: the pending room is full, and then some
            assert server.pending_connections <= server.max_pending_connections
            async with _mcp_client(server) as client:  # a real MCP client, as the CLI is
                summed = await asyncio.wait_for(client.call_tool("add", {"a": 1, "b": 2}), timeout=30)
            assert not summed.is_error and summed.content[0].text == "3"  # type: ignore[union-attr]
            # the idle ones are answered (408) or closed within the header deadline, not kept 300 s
            ends = await asyncio.wait_for(
                asyncio.gather(*(reader.read() for reader, _ in idle)), timeout=server.header_timeout + 10
            )
            assert all(end == b"" or end.startswith(b"HTTP/1.1 408") for end in ends)
            assert any(end.startswith(b"HTTP/1.1 408") for end in ends)
            assert server.pending_connections == 0
        finally:
            for _, writer in idle:
                writer.close()


async def test_a_request_line_without_the_secret_gets_a_short_deadline_and_a_401_closes() -> None:
    async with _server(add, header_timeout=0.3) as server:
        async with httpx.AsyncClient() as http:
            refused = await http.post(
                server.url, json=INITIALIZE, headers={"Content-Type": "application/json"}
            )
        assert refused.status_code == 401 and refused.headers.get("connection") == "close"
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        answer = await asyncio.wait_for(reader.read(), timeout=5)  # sends nothing: 408 after 0.3 s
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408")


async def test_deep_json_gets_a_parse_error_answer_not_a_dropped_connection() -> None:
    async with _server(add) as server:
        async with httpx.AsyncClient() as http:
            init = await http.post(server.url, json=INITIALIZE, headers=_headers(server))
            deep = b"[" * 500_000 + b"]" * 500_000
            answer = await http.post(
                server.url,
                content=deep,
                headers=_headers(server, **{"Mcp-Session-Id": init.headers["mcp-session-id"]}),
            )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32700
