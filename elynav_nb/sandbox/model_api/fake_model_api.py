"""A fake model API on loopback: the three streaming APIs the agent CLIs call, answered from a script.

Where it sits: in ``elynav_nb.sandbox.model_api``, used by the real-binary tests (``tests/real_cli``),
benchmarks and notebooks to run the real ``claude``, ``codex`` and ``gemini`` CLIs whole turns,
offline. It speaks the Anthropic Messages API (``POST /v1/messages``, SSE), the OpenAI Responses
API (``POST /v1/responses``, SSE) and the Gemini API (``POST /v1beta/models/<m>:streamGenerateContent``,
SSE), one Starlette app under uvicorn on ``127.0.0.1`` and a free port.

How data flows: request -> ``_classify`` (which API) -> the wire module's ``describe_request`` ->
a ``ModelRequest`` appended to ``requests`` (secret headers redacted) -> the next ``Reply`` of
``script`` (side requests get a fixed answer) -> the wire module's ``render_reply`` -> frames
streamed with the reply's ``chunk_delay``; ``cut_after_frames`` aborts the connection mid-body.

Pointing each CLI at it (``url`` is ``http://127.0.0.1:<port>``)::

    claude: ANTHROPIC_BASE_URL=<url>  ANTHROPIC_API_KEY=<any>
    codex:  a model provider with base_url=<url>/v1, wire_api="responses" (``openai_base_url``)
    gemini: GOOGLE_GEMINI_BASE_URL=<url>  GEMINI_API_KEY=<any>  (+ settings selectedType gemini-api-key)

Use it with ``async with FakeModelApi([...]) as api`` on the caller's event loop, or ``with`` (a
thread of its own, for synchronous code). ``wait_for_requests`` waits (bounded) for a request count.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gzip
import json
import logging
import socket
import threading
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from elynav_nb.errors import InvalidInput, OperationTimeout
from elynav_nb.sandbox.model_api import fake_wire_anthropic, fake_wire_gemini, fake_wire_openai
from elynav_nb.sandbox.model_api.fake_model_script import (
    ApiName,
    ModelRequest,
    ModelScript,
    Reply,
    ReplyChooser,
    RequestFacts,
    WireAnswer,
    redact_headers,
)

__all__ = ["FakeModelApi"]

_START_TIMEOUT_SECONDS = 10.0
_POLL_SECONDS = 0.01


class _StreamCut(Exception):
    """Raised inside a streamed body to make uvicorn drop the connection (a cut stream)."""


class _HideStreamCuts(logging.Filter):
    """uvicorn logs an exception raised mid-body; a scripted cut is not one."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], _StreamCut))


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: a notebook's interrupt must stay the kernel's."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _classify(method: str, path: str) -> ApiName:
    if method == "POST" and "/v1/messages" in path:
        return "anthropic"
    if method == "POST" and path.rstrip("/").endswith("/responses"):
        return "openai"
    if method == "POST" and "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
        return "gemini"
    return "other"


def _decode_body(raw: bytes, encoding: str) -> Any:
    try:
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        elif encoding not in ("", "identity"):
            return {"undecoded_content_encoding": encoding, "size": len(raw)}
        return json.loads(raw) if raw.strip() else None
    except (OSError, ValueError, zlib.error):
        return {"undecodable_body_size": len(raw)}


class FakeModelApi:
    """The loopback model server. ``replies`` (and later ``reply(...)``) answer model requests in order.

    ``chooser(request) -> Reply | None`` may pick a reply per request instead (a prompt keyword...).
    ``requests`` lists every request received, side ones included.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        chooser: ReplyChooser | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = ModelScript(replies, chooser=chooser)
        self.host = host
        self._wanted_port = port
        self.port: int | None = None
        self._requests: list[ModelRequest] = []
        self._lock = threading.Lock()
        self._sequence = 0
        self._streams_finished = 0
        self._server: _Server | None = None
        self._serve_task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._log_filter = _HideStreamCuts()
        self._app = Starlette(
            routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "HEAD", "PUT", "DELETE"])]
        )

    # -- addresses --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (Anthropic and Gemini base URL)."""
        if self.port is None:
            raise InvalidInput("the fake model API is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The Responses API base (``<url>/v1``), what a codex model provider's ``base_url`` takes."""
        return f"{self.url}/v1"

    def cli_environment(self, api_key: str = "fake-key") -> dict[str, str]:
        """The variables that point all three CLIs at this server, for ``AgentRunner(environment=...)``.

        claude: ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` (and no retries, no updater, no
        side traffic); codex: ``OPENAI_BASE_URL`` (the runner makes it a Responses-API provider:
        codex itself ignores the variable) / ``CODEX_API_KEY``; gemini: ``GOOGLE_GEMINI_BASE_URL`` /
        ``GEMINI_API_KEY``. ``api_key`` is any string: the server checks none.
        """
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": api_key,
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "OPENAI_BASE_URL": self.openai_base_url,
            "CODEX_API_KEY": api_key,
            "GOOGLE_GEMINI_BASE_URL": self.url,
            "GEMINI_API_KEY": api_key,
        }

    # -- script and records -------------------------------------------------------------------

    def reply(self, *replies: Reply) -> FakeModelApi:
        """Queue replies after those not used yet."""
        self.script.extend(replies)
        return self

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request so far (a copy)."""
        with self._lock:
            return list(self._requests)

    def model_requests(self, api: ApiName | None = None) -> list[ModelRequest]:
        """The conversational requests (those the script answers), of one API or all."""
        return [
            request
            for request in self.requests
            if request.conversational and (api is None or request.api == api)
        ]

    @property
    def streams_finished(self) -> int:
        """How many streamed answers were sent to their end (or cut): a test's "mid-stream" marker."""
        with self._lock:
            return self._streams_finished

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    async def wait_for_requests(
        self, count: int, *, timeout: float = 30.0, where: Callable[[ModelRequest], bool] | None = None
    ) -> list[ModelRequest]:
        """Wait until ``count`` requests (matching ``where``, if given) arrived; ``TIMEOUT`` after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            matching = [request for request in self.requests if where is None or where(request)]
            if len(matching) >= count:
                return matching
            if loop.time() >= deadline:
                raise OperationTimeout(
                    f"the fake model API got {len(matching)} of {count} requests within {timeout:g} s"
                )
            await asyncio.sleep(_POLL_SECONDS)

    # -- HTTP ---------------------------------------------------------------------------------

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        path = request.url.path
        body = _decode_body(raw, request.headers.get("content-encoding", "").lower())
        api = _classify(request.method, path)
        facts = self._describe(api, path, body)
        with self._lock:
            self._sequence += 1
            sequence = self._sequence
        record = ModelRequest(
            api=api,
            method=request.method,
            path=path + (f"?{request.url.query}" if request.url.query else ""),
            headers=redact_headers(request.headers.items()),
            body=body,
            model=facts.model,
            system_prompt=facts.system_prompt,
            tool_names=facts.tool_names,
            last_user_text=facts.last_user_text,
            conversational=facts.conversational,
        )
        answer, reply_index = self._answer(record, path, body, sequence)
        with self._lock:
            self._requests.append(dataclasses.replace(record, reply_index=reply_index))
        return self._respond(answer)

    @staticmethod
    def _describe(api: ApiName, path: str, body: Any) -> RequestFacts:
        if api == "anthropic":
            return fake_wire_anthropic.describe_request(path, body)
        if api == "openai":
            return fake_wire_openai.describe_request(path, body)
        if api == "gemini":
            return fake_wire_gemini.describe_request(path, body)
        return RequestFacts(conversational=False)

    def _answer(
        self, record: ModelRequest, path: str, body: Any, sequence: int
    ) -> tuple[WireAnswer, int | None]:
        if record.api == "other":
            payload = (
                {"object": "list", "data": [], "models": []}
                if path.rstrip("/").endswith("/models")
                else {"error": {"message": f"the fake model API does not serve {record.method} {path}"}}
            )
            status = 200 if "data" in payload else 404
            return WireAnswer(status, "application/json", (json.dumps(payload).encode(),)), None
        if not record.conversational:
            if record.api == "anthropic":
                return fake_wire_anthropic.side_answer(path, body, sequence), None
            if record.api == "gemini":
                return fake_wire_gemini.side_answer(path, body), None
        reply, index = self.script.peek(record)
        if record.api == "anthropic":
            answer = fake_wire_anthropic.render_reply(reply, body, sequence)
        elif record.api == "openai":
            answer = fake_wire_openai.render_reply(reply, body, sequence)
        else:
            answer = fake_wire_gemini.render_reply(reply, path, sequence)
        if answer.consumed:
            self.script.consume(index)
        return answer, index

    def _respond(self, answer: WireAnswer) -> Response:
        if answer.content_type != "text/event-stream":
            return Response(
                b"".join(answer.frames), status_code=answer.status, media_type=answer.content_type
            )

        async def frames() -> AsyncIterator[bytes]:
            try:
                for number, frame in enumerate(answer.frames):
                    if answer.cut_after_frames is not None and number >= answer.cut_after_frames:
                        raise _StreamCut()
                    if answer.chunk_delay:
                        await asyncio.sleep(answer.chunk_delay)
                    yield frame
            finally:
                with self._lock:
                    self._streams_finished += 1

        headers = {"cache-control": "no-cache"}
        return StreamingResponse(
            frames(), status_code=answer.status, media_type="text/event-stream", headers=headers
        )

    # -- life cycle on the caller's loop ----------------------------------------------------------

    def _make_server(self) -> tuple[_Server, socket.socket]:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._wanted_port))
        self.port = int(listener.getsockname()[1])
        config = uvicorn.Config(
            self._app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            timeout_graceful_shutdown=1,
        )
        logging.getLogger("uvicorn.error").addFilter(self._log_filter)
        return _Server(config), listener

    async def start(self) -> Self:
        """Serve on the running loop until ``stop()``. Idempotent."""
        if self._server is not None:
            return self
        server, listener = self._make_server()
        self._server = server
        self._serve_task = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
        await self._wait_started(server)
        return self

    async def _wait_started(self, server: _Server) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_TIMEOUT_SECONDS
        while not server.started:
            if self._serve_task is not None and self._serve_task.done():
                self._serve_task.result()  # raises the start-up failure
                raise InvalidInput("the fake model API stopped during start-up")
            if loop.time() >= deadline:
                raise OperationTimeout(
                    f"the fake model API did not start within {_START_TIMEOUT_SECONDS:g} s"
                )
            await asyncio.sleep(_POLL_SECONDS)

    async def stop(self) -> None:
        """Close the server (open streams get ``timeout_graceful_shutdown``, 1 s). Idempotent."""
        server, task = self._server, self._serve_task
        self._server, self._serve_task = None, None
        if server is None or task is None:
            return
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
        logging.getLogger("uvicorn.error").removeFilter(self._log_filter)

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- life cycle on a thread of its own (synchronous callers) ------------------------------------

    def __enter__(self) -> Self:
        started = threading.Event()
        failure: list[Exception] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._thread_loop = loop
            try:
                loop.run_until_complete(self.start())
            except Exception as error:  # noqa: BLE001 - re-raised in the caller's thread below
                failure.append(error)
                started.set()
                loop.close()
                return
            started.set()
            assert self._serve_task is not None
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(self._serve_task)
            loop.close()

        self._thread = threading.Thread(target=serve, name="elynav-fake-model-api", daemon=True)
        self._thread.start()
        if not started.wait(_START_TIMEOUT_SECONDS + 1):
            raise OperationTimeout("the fake model API thread did not start")
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc_info: object) -> None:
        loop, thread, server = self._thread_loop, self._thread, self._server
        if loop is None or thread is None:
            return
        if server is not None:
            loop.call_soon_threadsafe(setattr, server, "should_exit", True)
        thread.join(timeout=5)
        self._server, self._serve_task, self._thread, self._thread_loop = None, None, None, None
        logging.getLogger("uvicorn.error").removeFilter(self._log_filter)

    def __repr__(self) -> str:
        where = self.url if self.port is not None else "not started"
        return f"<FakeModelApi {where} requests={len(self.requests)} replies_left={self.script.remaining}>"
