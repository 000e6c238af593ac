"""Acknowledged Docs writes are not lost (issue 28, 6b): saved at interpreter exit, saves that meet
Docs' throttle waited out with the socket kept, a given-up save kept in a file that can be saved
later, a write retried after SYNC_TIMEOUT not written twice, and the MCP insert_block telling the
truth when its save is throttled.

Docs' per-user throttle is the sandbox's (``throttle.UserThrottle``: DRF's 80 a minute, shared by
the collaboration gate's own check of each connect); the tests shrink its window to seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from mcp import Client

from elynav_nb.docs.mcp.server import DocsToolService, build_docs_server
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import ElynavError
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def kept_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "kept"
    monkeypatch.setenv("ELYNAV_DOCS_UNSAVED_DIR", str(folder))
    return folder


async def texts_saved_in(sandbox: DocsSandbox, document_id: str) -> list[str]:
    """What a new session reads: the saved content (the room is empty by then)."""
    async with DocsSession.open(sandbox.document_link(document_id), sandbox.credentials()) as doc:
        return [block.text for block in doc.blocks]


async def use_up_the_bucket(sandbox: DocsSandbox) -> None:
    """Spend the default user's remaining requests, as the person's browser tabs would."""
    async with httpx.AsyncClient(base_url=sandbox.url) as client:
        for _ in range(sandbox.throttle.rate):
            await client.get("/api/v1.0/documents/", headers={"Cookie": sandbox.cookie})


SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys
    from elynav_nb.docs import DocsSession

    async def main():
        doc = await DocsSession.open(os.environ["LINK"], save_debounce=60)
        await doc.append_block("written by a script that never closes")
        print("acknowledged", flush=True)   # and the script ends: no close(), no save yet

    asyncio.run(main())
    """
)


async def test_a_script_that_ends_without_close_has_its_write_saved_at_exit() -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Compte rendu")
        environment = {
            **os.environ,
            "LINK": sandbox.document_link(document.id),
            "DOCS_SESSION_ID": sandbox.session_id,
            "DOCS_CSRF_TOKEN": sandbox.csrf_token,
            "DOCS_INSTANCE_URL": sandbox.url,
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            SCRIPT,
            env=environment,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        assert process.returncode == 0, stderr.decode()[-2000:]
        assert stdout.decode().strip() == "acknowledged"
        warning = stderr.decode()
        assert "DocsUnsavedWarning" in warning and "'Compte rendu'" in warning and document.id in warning
        assert "saved at exit" in warning
        assert await texts_saved_in(sandbox, document.id) == ["written by a script that never closes"]


async def test_close_waits_out_docs_throttle_with_the_socket_kept() -> None:
    async with DocsSandbox(throttle_per_minute=6, throttle_period=3.0) as sandbox:
        document = sandbox.create_document("Throttled")
        doc = await DocsSession.open(
            sandbox.document_link(document.id), sandbox.credentials(), save_debounce=60
        )
        await doc.append_block("kept through a 429")
        await use_up_the_bucket(sandbox)
        result = await doc.close()
        assert result is not None and result.saved
        saves = [entry for entry in sandbox.request_log if entry[0] == "PATCH"]
        assert saves[0][2] == 429 and saves[-1][2] == 204
        assert all(live >= 1 for _, _, _, live in saves)  # never left the room before the save landed
        await asyncio.sleep(3.0)  # a fresh window for the reader
        assert await texts_saved_in(sandbox, document.id) == ["kept through a 429"]


async def test_close_that_must_give_up_keeps_the_state_where_it_can_be_saved(kept_states: Path) -> None:
    async with DocsSandbox(throttle_per_minute=6, throttle_period=30.0) as sandbox:
        document = sandbox.create_document("Given up")
        doc = await DocsSession.open(
            sandbox.document_link(document.id), sandbox.credentials(), save_debounce=60, save_patience=0.5
        )
        await doc.append_block("not lost")
        await use_up_the_bucket(sandbox)
        with pytest.raises(ElynavError) as refused:
            await doc.close()
        error = refused.value
        assert error.code == "UNSAVED_CHANGES" and error.details["cause"] == "RATE_LIMITED"
        kept = Path(error.details["kept_in"])
        assert kept.parent == kept_states and kept.exists() and str(kept) in error.message
        assert oct(kept.stat().st_mode & 0o777) == "0o600"
        note = json.loads(kept.with_suffix(".json").read_text())
        assert note["document_id"] == document.id and note["reason"] == "RATE_LIMITED"
        assert sandbox.session_id not in kept.with_suffix(".json").read_text()

        sandbox.throttle.reset()  # the window has passed
        result = await DocsSession.save_kept_state(str(kept), sandbox.credentials())
        assert result.saved and not kept.exists()
        sandbox.throttle.reset()
        assert await texts_saved_in(sandbox, document.id) == ["not lost"]


async def test_saved_waits_until_the_edit_is_durable() -> None:
    async with DocsSandbox(throttle_per_minute=6, throttle_period=2.0) as sandbox:
        document = sandbox.create_document("Durable")
        async with DocsSession.open(
            sandbox.document_link(document.id), sandbox.credentials(), save_debounce=60
        ) as doc:
            await doc.append_block("durable now")
            assert sandbox.store.get_document(document.id).content is None  # live, not saved
            await use_up_the_bucket(sandbox)
            result = await doc.saved()
            assert result.saved and sandbox.store.get_document(document.id).content is not None
            assert (await doc.saved()).reason == "nothing unsaved"


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


async def test_a_write_retried_after_sync_timeout_is_not_written_twice(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Pending")
    async with DocsSession.open(
        sandbox.document_link(document.id), sandbox.credentials(), ack_timeout=0.3
    ) as doc:
        sandbox.hub.hold_acks(document.id)  # the collaboration server goes quiet
        with pytest.raises(ElynavError) as first:
            await doc.append_block("only once")
        assert first.value.code == "SYNC_TIMEOUT" and first.value.details["pending"] is True
        assert "still pending" in first.value.message and "without writing it twice" in first.value.message
        block_id = first.value.details["result"]
        with pytest.raises(ElynavError) as again:  # the agent retries while it is still pending
            await doc.append_block("only once")
        assert again.value.details["result"] == block_id
        sandbox.hub.release_acks(document.id)
        assert await doc.append_block("only once") == block_id  # the retry, answered
        assert [block.text for block in doc.blocks] == ["only once"]
    assert await texts_saved_in(sandbox, document.id) == ["only once"]


async def test_mcp_insert_block_never_answers_rate_limited_for_a_block_it_inserted() -> None:
    async with DocsSandbox(throttle_per_minute=8, throttle_period=4.0) as sandbox:
        document = sandbox.create_document("Agent")
        service = DocsToolService(sandbox.credentials(), save_wait=0.2)
        async with Client(build_docs_server(service), raise_exceptions=True) as client:
            read = await client.call_tool("read_document", {"doc_url": sandbox.document_link(document.id)})
            assert not read.is_error
            await use_up_the_bucket(sandbox)
            inserted = await client.call_tool(
                "insert_block", {"doc_id": document.id, "content": {"text": "inserted once"}}
            )
            answer = json.loads(inserted.content[0].text)
            assert not inserted.is_error, answer
            assert answer["saved"] is False and "RATE_LIMITED" in answer["warning"]
            assert "do not repeat" in answer["warning"] and answer["block_id"]
        # the server stopped (lifespan): its pool closed the session, which waited out the throttle
        assert await texts_saved_in(sandbox, document.id) == ["inserted once"]


async def test_the_sandbox_throttles_per_user_as_docs_does() -> None:
    async with DocsSandbox(throttle_per_minute=2) as sandbox:
        document = sandbox.create_document("Bucket")
        # retrieve and load the content: 2 requests; the collaboration gate's own check is the 3rd
        with pytest.raises(ElynavError) as refused:
            await DocsSession.open(sandbox.document_link(document.id), sandbox.credentials())
        assert refused.value.code == "NOT_ALLOWED" and "80 requests a minute" in refused.value.message
        async with httpx.AsyncClient(base_url=sandbox.url) as client:
            answer = await client.get(
                f"/api/v1.0/documents/{document.id}/", headers={"Cookie": sandbox.cookie}
            )
            other_user = sandbox.create_user("Bob")[1]
            someone_else = await client.get(
                "/api/v1.0/documents/", headers={"Cookie": f"docs_sessionid={other_user}"}
            )
        assert answer.status_code == 429 and 1 <= int(answer.headers["Retry-After"]) <= 60
        wait = answer.headers["Retry-After"]
        assert answer.json() == {"detail": f"Request was throttled. Expected available in {wait} seconds."}
        assert someone_else.status_code == 200  # one bucket per user
