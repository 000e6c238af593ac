"""``TurnTranscript``: stored events coalesce consecutive deltas, readers get every event (pure, no process)."""

from __future__ import annotations

from elynav_nb.agents._transcript import TurnTranscript
from elynav_nb.agents.events import (
    AgentEvent,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.results import main_text


def mixed_stream() -> list[AgentEvent]:
    return [
        AgentStarted(session_id="s1"),
        TextDelta("Let "),
        TextDelta("me "),
        ThinkingDelta("hmm, "),
        ThinkingDelta("a tool."),
        TextDelta("look."),
        ToolUse(id="tu1", name="Task", input={"prompt": "go"}),
        TextDelta("sub ", parent_tool_use_id="tu1"),
        TextDelta("agent", parent_tool_use_id="tu1"),
        TextDelta(" Done"),
        ToolResult(tool_use_id="tu1", content="ok"),
        TextDelta(" It "),
        TextDelta("works."),
        TurnEnded(subtype="success", is_error=False, result="Let me look. Done It works."),
    ]


def test_consecutive_deltas_of_one_kind_and_agent_are_stored_as_one_in_order() -> None:
    stream = mixed_stream()
    transcript = TurnTranscript()
    for event in stream:
        transcript.append(event)

    stored = transcript.events()
    assert stored == [
        stream[0],
        TextDelta("Let me "),
        ThinkingDelta("hmm, a tool."),
        TextDelta("look."),
        stream[6],
        TextDelta("sub agent", parent_tool_use_id="tu1"),
        TextDelta(" Done"),
        stream[10],
        TextDelta(" It works."),
        stream[13],
    ]
    assert main_text(stored) == main_text(stream) == "Let me look. Done It works."
    assert stored[3] is stream[5]  # a delta alone in its run is stored as it came


def test_a_long_run_keeps_its_exact_text_through_chunking_and_snapshots() -> None:
    transcript = TurnTranscript()
    pieces = [f"t{number} " for number in range(1000)]
    snapshots: dict[int, str] = {}
    for number, piece in enumerate(pieces):
        transcript.append(TextDelta(piece))
        if number in (0, 255, 256, 700):  # mid-run reads, around a chunk boundary
            [delta] = transcript.events()
            assert isinstance(delta, TextDelta)
            snapshots[number] = delta.text
    transcript.append(TurnEnded(subtype="success", is_error=False))

    for number, text in snapshots.items():
        assert text == "".join(pieces[: number + 1])
    stored = transcript.events()
    assert len(stored) == 2
    assert main_text(stored) == "".join(pieces)


def test_readers_get_every_event_live_and_a_late_reader_starts_from_the_stored_events() -> None:
    stream = mixed_stream()
    transcript = TurnTranscript()
    from_start = transcript.open_reader()
    for event in stream[:13]:  # up to the middle of the last text run ("It ")
        transcript.append(event)
    late = transcript.open_reader()
    assert list(late) == transcript.events()  # the stored events so far, the open run as one delta
    late.clear()
    transcript.append(stream[13])

    assert list(from_start) == stream
    assert all(got is sent for got, sent in zip(from_start, stream, strict=True))
    assert list(late) == [stream[13]]

    transcript.close_reader(from_start)
    transcript.append(TextDelta("after"))
    assert len(from_start) == len(stream)  # a closed reader is no longer fed
    assert transcript.reader_count == 1


def test_keep_deltas_stores_every_event_as_it_came() -> None:
    stream = mixed_stream()
    transcript = TurnTranscript(keep_deltas=True)
    for event in stream:
        transcript.append(event)
    stored = transcript.events()
    assert stored == stream
    assert all(got is sent for got, sent in zip(stored, stream, strict=True))


def test_a_hook_denial_reaches_the_result_it_explains_by_id_or_by_tool_name():
    from elynav_nb.agents._transcript import HookDenials
    from elynav_nb.agents.events import HookDenied, ToolResult, ToolUse

    denials = HookDenials()
    by_id = HookDenied("PreToolUse", "Bash", "no rm here", tool_use_id="t1", callback="no_rm")
    nameless = HookDenied("PreToolUse", "run_shell_command", "not today", callback="policy")  # gemini: no id
    events = [
        ToolUse("t1", "Bash"),
        by_id,
        ToolResult("t1", "PreToolUse:Bash hook error: no rm here", is_error=True),
        ToolUse("t2", "run_shell_command"),
        ToolUse("t3", "read_file"),
        nameless,
        ToolResult("t3", "failed on its own", is_error=True),
        ToolResult("t2", "blocked", is_error=True),
        ToolResult("t1", "a second result, no denial left", is_error=True),
    ]
    seen = [denials.annotate(event) for event in events]
    results = [event for event in seen if isinstance(event, ToolResult)]
    assert [result.denial for result in results] == [by_id.summary(), "", nameless.summary(), ""]
    assert results[0].summary() == "denied by the PreToolUse hook no_rm on Bash: no rm here"
    assert results[1].summary() == "error: failed on its own"
