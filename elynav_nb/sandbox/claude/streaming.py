"""The stand-in's streamed API responses: the lines every turn shares, one response as the CLI writes it.

Where it sits: the base of the stand-in's turn (``turns.TurnRunner`` builds on
``tool_calls.ToolRoundTrips``, which builds on ``ResponseStreaming``). It holds the turn's
``session`` (``SessionState``), ``user_message`` and ``state`` (``TurnState``) and writes lines through
``session.emit``; their shape comes from ``wire``.

How data flows, one API response::

    _begin_response -> message_start (stream_event, only with --include-partial-messages)
      -> per block: content_block_start, deltas (thinking / text, three words each), the
         ``assistant`` line, content_block_stop      (_stream_thinking, _stream_text)
      -> _end_response -> message_delta (stop reason, output tokens), message_stop

Also here: the ``system/init`` line (``_init_line``), ``system/status`` with the replayed user
message (``_status``) and ``@standin flood`` (``_stream_flood``: many deltas written in batches from
one precomputed line template). ``state`` tracks the open block and the text streamed so far, so
an interrupt can write the partial reply.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.turn_state import (
    FLOOD_BATCH_LINES,
    SessionState,
    TurnState,
    estimate_tokens,
    split_into_deltas,
)

__all__ = ["ResponseStreaming"]


class ResponseStreaming:
    """The lines of streamed API responses, for one user message (base of ``TurnRunner``)."""

    def __init__(self, session: SessionState, user_message: dict[str, Any]) -> None:
        self.session = session
        self.user_message = user_message
        self.state = TurnState(started=time.monotonic())
        self.interrupt_by_signal = False

    # ------------------------------------------------------------------ lines shared by every turn

    def _init_line(self) -> dict[str, Any]:
        session = self.session
        servers = [(state.config.name, state.status) for state in session.hub.states]
        return wire.build_init(
            session.style,
            cwd=session.cwd,
            session_id=session.session_id,
            tools=session.init_tools(),
            mcp_servers=servers,
            model=session.model,
            permission_mode=session.reported_permission_mode(),
            agents=session.agents,
            memory_directory=session.memory_directory,
            additional_directories=session.additional_directories,
        )

    def _status(self) -> None:
        session = self.session
        session.emit(wire.build_status(session.style, session.session_id))
        if session.replay_user_messages and self.state.api_calls == 0:
            session.emit(wire.build_replay(session.session_id, self.user_message))

    def _event(self, event: dict[str, Any], ttft_ms: int | None = None) -> None:
        session = self.session
        if not session.include_partial_messages:
            return
        session.emit(
            wire.build_stream_event(
                session.style,
                session.session_id,
                self.state.current_message_id,
                event,
                parent_tool_use_id=self.state.current_parent,
                ttft_ms=ttft_ms,
            )
        )

    # ------------------------------------------------------------------ streamed API responses

    def _begin_response(self, parent: str | None = None) -> None:
        state = self.state
        state.api_calls += 1
        state.current_message_id = wire.new_message_id()
        state.current_parent = parent
        state.begun_message_ids.append(state.current_message_id)
        ttft = 12 + 3 * state.api_calls
        if state.ttft_ms is None:
            state.ttft_ms = ttft
        state.api_milliseconds += ttft + 10
        state.input_tokens += estimate_tokens(json.dumps(self.user_message))
        state.stream_open = True
        start = {
            "type": "message_start",
            "message": {
                "id": state.current_message_id,
                "type": "message",
                "role": "assistant",
                "model": self.session.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": wire.assistant_usage(estimate_tokens(json.dumps(self.user_message))),
            },
        }
        self._event(start, ttft_ms=ttft)

    def _end_response(self, stop_reason: str, output_text: str) -> None:
        output_tokens = estimate_tokens(output_text)
        self.state.output_tokens += output_tokens
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
        self._event(delta)
        self._event({"type": "message_stop"})
        self.state.stream_open = False
        self.session.total_cost_usd += self.state.cost_per_response

    def _assistant_line(
        self,
        block: dict[str, Any],
        *,
        aborted: bool = False,
        tool_use_meta: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        session = self.session
        return wire.build_assistant(
            session.style,
            session.session_id,
            self.state.current_message_id,
            session.model,
            block,
            input_tokens=estimate_tokens(json.dumps(self.user_message)),
            parent_tool_use_id=self.state.current_parent,
            aborted=aborted,
            tool_use_meta=tool_use_meta,
        )

    async def _stream_response(
        self, blocks: list[dict[str, Any]], stop_reason: str, *, seconds: float = 0.0
    ) -> None:
        """One API response: message_start, each block (deltas, assistant line, stop), message_delta, message_stop."""
        self._begin_response()
        output_text = ""
        delta_count = 0
        for block in blocks:
            if block["type"] == "text":
                delta_count += len(split_into_deltas(block["text"]))
        pause = seconds / delta_count if seconds > 0 and delta_count else 0.0
        for index, block in enumerate(blocks):
            if block["type"] == "thinking":
                await self._stream_thinking(index, block["thinking"])
            elif block["type"] == "text":
                await self._stream_text(index, block["text"], pause)
                output_text += block["text"]
        self._end_response(stop_reason, output_text)

    def _stream_tool_use(
        self,
        index: int,
        tool_use_id: str,
        name: str,
        tool_input: Any,
        tool_use_meta: list[dict[str, Any]] | None = None,
    ) -> str:
        """One tool_use block: start, input_json_delta pieces, the assistant line, stop. Returns the input JSON."""
        self._event(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}},
            }
        )
        input_json = json.dumps(tool_input)
        for start in range(0, len(input_json), 16):
            self._event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": input_json[start : start + 16]},
                }
            )
        tool_block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}
        self.session.emit(self._assistant_line(tool_block, tool_use_meta=tool_use_meta))
        self._event({"type": "content_block_stop", "index": index})
        return input_json

    async def _stream_thinking(self, index: int, thinking: str) -> None:
        signature = "ZWx5bmF2LXN0YW5kaW4="
        self._event(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
        )
        self._event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": thinking},
            }
        )
        self._event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": signature},
            }
        )
        self.session.emit(
            self._assistant_line({"type": "thinking", "thinking": thinking, "signature": signature})
        )
        self._event({"type": "content_block_stop", "index": index})
        await asyncio.sleep(0)

    async def _stream_text(self, index: int, text: str, pause: float) -> None:
        state = self.state
        state.open_block_index = index
        state.streamed_text = ""
        self._event(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        )
        for delta in split_into_deltas(text):
            if pause > 0:
                await asyncio.sleep(pause)
            else:
                await asyncio.sleep(0)
            state.streamed_text += delta
            self._event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": delta},
                }
            )
        self.session.emit(self._assistant_line({"type": "text", "text": text}))
        state.open_block_index = None
        state.streamed_text = ""
        self._event({"type": "content_block_stop", "index": index})

    async def _stream_flood(self, count: int) -> str:
        """``count`` text deltas written in batches from a precomputed line template."""
        session = self.session
        state = self.state
        self._begin_response()
        index = 0
        state.open_block_index = index
        self._event(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        )
        pieces: list[str] = []
        prefix, middle, suffix = wire.text_delta_line_template(
            session.style, session.session_id, state.current_message_id, index
        )
        batch: list[str] = []
        for number in range(count):
            piece = f"t{number} "
            pieces.append(piece)
            if session.include_partial_messages:
                batch.append(prefix + '"' + piece + '"' + middle + wire.new_uuid() + suffix)
            if len(pieces) % FLOOD_BATCH_LINES == 0:
                if batch:
                    session.emit_bytes("".join(batch).encode("utf-8"))
                    batch = []
                state.streamed_text = "".join(pieces)
                await asyncio.sleep(0)
        if batch:
            session.emit_bytes("".join(batch).encode("utf-8"))
        text = "".join(pieces)
        session.emit(self._assistant_line({"type": "text", "text": text}))
        state.open_block_index = None
        state.streamed_text = ""
        self._event({"type": "content_block_stop", "index": index})
        self._end_response("end_turn", text)
        return text
