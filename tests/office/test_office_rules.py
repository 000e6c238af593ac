"""The office's pure rules: what an ask must be, wait-for cycles, cancel rights, the socket's wire format,
the history fold."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from elynav_nb.errors import Deadlock, InvalidInput, NotAllowed, ProtocolError
from elynav_nb.office.ask_rules import (
    capped_deadline,
    check_depth,
    checked_parent,
    checked_text,
    checked_timeout,
)
from elynav_nb.office.cascade import check_no_cycle, find_wait_cycle, pending_descendants
from elynav_nb.office.history import HistoryLog, fold_records, history_frame
from elynav_nb.office.rights import USER, check_cancel_right, may_cancel
from elynav_nb.office.wire import (
    MAX_REQUEST_BYTES,
    AskRequest,
    CancelRequest,
    decode_answer,
    decode_request,
    encode_ask_request,
    encode_cancel_request,
    encode_error,
    error_from_answer,
)


class FakeAsk:
    def __init__(self, agent="b", parent=None, deadline=100.0, done=False, cancelling=False):
        self.id, self.agent, self.parent, self.deadline = f"ask-{agent}", agent, parent, deadline
        self.done, self.cancelling = done, cancelling


def test_an_ask_needs_a_text_and_a_positive_timeout_within_the_offices_bounds():
    assert checked_text("hello", 10) == "hello"
    for bad in ("", "   ", None, 3, "x" * 11):
        with pytest.raises(InvalidInput):
            checked_text(bad, 10)
    assert checked_timeout(None, 3600.0) == 3600.0 and checked_timeout(2, 3600.0) == 2.0
    for bad in (0, -1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(InvalidInput):
            checked_timeout(bad, 3600.0)


def test_a_parent_is_a_running_ask_of_the_sender_and_chains_stay_short_and_within_its_deadline():
    root = FakeAsk("a", deadline=50.0)
    child = FakeAsk("b", parent=root, deadline=40.0)
    assert checked_parent(child, "b") is child
    with pytest.raises(InvalidInput):
        checked_parent(child, "c")  # not the sender's
    with pytest.raises(InvalidInput):
        checked_parent(FakeAsk("b", done=True), "b")
    with pytest.raises(NotAllowed):
        checked_parent(FakeAsk("b", cancelling=True), "b")
    check_depth(child, 3)  # child is the second ask of its chain: one more is allowed at limit 3, not at 2
    with pytest.raises(InvalidInput):
        check_depth(child, 2)
    assert capped_deadline(10.0, 100.0, child) == 40.0 and capped_deadline(10.0, 5.0, child) == 15.0
    assert capped_deadline(10.0, 5.0, None) == 15.0


def graph(edges: dict[str, list[str]]):
    return lambda agent: edges.get(agent, [])


@pytest.mark.parametrize(
    ("sender", "target", "edges", "cycle"),
    [
        ("a", "a", {}, ["a", "a"]),
        ("a", "b", {"b": ["a"]}, ["a", "b", "a"]),
        ("a", "b", {"b": ["c"], "c": ["a"]}, ["a", "b", "c", "a"]),
        ("a", "b", {"b": ["x", "c"], "x": [], "c": ["d"], "d": ["a"]}, ["a", "b", "c", "d", "a"]),
        ("a", "b", {"b": ["c"], "c": ["b"]}, None),  # a cycle that does not go through a is not ours to close
        ("a", "b", {"a": ["b"]}, None),  # a already waits for b: one more ask is no cycle
        ("a", "b", {}, None),
    ],
)
def test_wait_cycles_are_found_through_any_path(sender, target, edges, cycle):
    assert find_wait_cycle(sender, target, graph(edges)) == cycle


def test_a_cycle_is_refused_with_deadlock_and_the_path():
    with pytest.raises(Deadlock) as caught:
        check_no_cycle("a", "b", graph({"b": ["c"], "c": ["a"]}))
    assert caught.value.code == "DEADLOCK"
    assert caught.value.details["cycle"] == ["a", "b", "c", "a"]
    assert "a -> b -> c -> a" in str(caught.value)
    with pytest.raises(Deadlock, match="cannot ask itself"):
        check_no_cycle("a", "a", graph({}))
    check_no_cycle("a", "b", graph({"b": ["c"]}))  # no cycle: no error


def test_pending_descendants_lists_parents_before_children():
    tree = {"root": ["b", "c"], "b": ["d"], "c": [], "d": ["e"], "e": []}
    assert pending_descendants("root", lambda node: tree[node]) == ["b", "c", "d", "e"]


@pytest.mark.parametrize(
    ("sender", "caller", "allowed"),
    [("a", USER, True), (USER, USER, True), ("a", "a", True), ("a", "c", False), (USER, "a", False)],
)
def test_only_the_user_or_the_sender_may_cancel(sender, caller, allowed):
    assert may_cancel(ask_sender=sender, caller=caller) is allowed
    if allowed:
        check_cancel_right(ask_id="x1", ask_sender=sender, agent="b", caller=caller)
    else:
        with pytest.raises(NotAllowed) as caught:
            check_cancel_right(ask_id="x1", ask_sender=sender, agent="b", caller=caller)
        assert caught.value.details == {"ask_id": "x1", "caller": caller, "sender": sender, "agent": "b"}


def test_requests_round_trip_through_the_wire():
    assert decode_request(encode_ask_request("b", "héllo\nworld", 12)) == AskRequest(
        "b", "héllo\nworld", 12.0
    )
    assert decode_request(encode_ask_request("b", "x")) == AskRequest("b", "x", None)
    assert decode_request(encode_cancel_request("abc")) == CancelRequest("abc")
    assert encode_ask_request("b", "x").endswith(b"\n") and encode_ask_request("b", "x").count(b"\n") == 1


@pytest.mark.parametrize(
    "line",
    [
        b"garbage\n",
        b"[1, 2]\n",
        b"null\n",
        b'{"op": "dance"}\n',
        b'{"op": ["ask"]}\n',
        b"\xff\xfe\n",
        b'{"op": "ask", "agent": "b", "text": "\xc3"}\n',  # cut inside a UTF-8 sequence
        b'{"op": "ask", "agent": 3, "text": "x"}\n',
        b'{"op": "ask", "agent": "b"}\n',
        b'{"op": "ask", "agent": "b", "text": ["x"]}\n',
        b'{"op": "ask", "agent": "b", "text": "x", "timeout": "soon"}\n',
        b'{"op": "ask", "agent": "b", "text": "x", "timeout": true}\n',
        b'{"op": "ask", "agent": "b", "text": "x", "timeout": NaN}\n',
        b'{"op": "ask", "agent": "b", "text": "x", "timeout": 1' + b"0" * 400 + b"}\n",  # beyond any float
        b'{"op": "ask", "agent": "b", "text": "\\ud800"}\n',  # a lone surrogate
        b'{"op": "cancel"}\n',
        b'{"op": "cancel", "ask_id": 5}\n',
        b"[" * 100_000 + b"]" * 100_000 + b"\n",  # deeper than the JSON parser goes
        b'{"op": "ask", "agent": "b", "text": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}\n",
        b"x" * (MAX_REQUEST_BYTES + 1),
    ],
)
def test_any_line_that_is_not_a_request_is_a_protocol_error(line):
    with pytest.raises(ProtocolError) as caught:
        decode_request(line)
    assert type(caught.value) is ProtocolError and "\n" not in caught.value.message


def test_an_error_answer_comes_back_as_the_same_typed_error():
    answer = decode_answer(encode_error(Deadlock("a -> b -> a")))
    error = error_from_answer(answer)
    assert isinstance(error, Deadlock) and str(error) == "a -> b -> a"
    unknown = error_from_answer({"type": "error", "code": "FROM_THE_FUTURE", "message": "new"})
    assert unknown.code == "ELYNAV_ERROR" and unknown.details["code"] == "FROM_THE_FUTURE"
    with pytest.raises(ProtocolError):
        decode_answer(b"{}\n")


def test_history_folds_records_into_one_row_per_ask_and_skips_torn_lines(tmp_path):
    log = HistoryLog(tmp_path / "history.jsonl")
    start = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    log.append(
        {
            "record": "ask",
            "ask_id": "a1",
            "parent_id": None,
            "sender": "user",
            "agent": "b",
            "prompt": "p",
            "queued_at": start,
        }
    )
    log.append(
        {"record": "start", "ask_id": "a1", "started_at": start + timedelta(seconds=2), "session_id": "s1"}
    )
    log.append(
        {
            "record": "ask",
            "ask_id": "a2",
            "parent_id": "a1",
            "sender": "b",
            "agent": "c",
            "prompt": "q",
            "queued_at": start,
        }
    )
    log.append(
        {
            "record": "end",
            "ask_id": "a1",
            "outcome": "done",
            "reply": "r",
            "error_code": "",
            "error": "",
            "cancelled_by": "",
            "ended_at": start + timedelta(seconds=5),
            "session_id": "s1",
            "cost_usd": 0.5,
        }
    )
    log.append(
        {"record": "end", "ask_id": "a1", "outcome": "failed", "ended_at": start}
    )  # a second end is ignored
    with open(log.path, "ab") as handle:
        handle.write(b'{"record": "end", "ask_id": "a2", "outco')  # a kernel killed mid-write
    log = HistoryLog(log.path)  # the next office opens the file
    rows = fold_records(log.records())
    assert [row["ask_id"] for row in rows] == ["a1", "a2"]
    first, second = rows
    assert first["outcome"] == "done" and first["reply"] == "r" and first["cost_usd"] == 0.5
    assert first["wait_s"] == 2.0 and first["run_s"] == 3.0 and first["session_id"] == "s1"
    assert second["outcome"] is None and second["parent_id"] == "a1"
    assert log.end_unfinished("the office stopped") == ["a2"]
    repaired = {row["ask_id"]: row for row in fold_records(log.records())}
    assert repaired["a2"]["outcome"] == "failed" and repaired["a2"]["error"] == "the office stopped"
    assert log.end_unfinished("again") == []  # idempotent
    frame = history_frame(fold_records(log.records()))
    assert str(frame["queued_at"].dtype).startswith("datetime64") and str(frame["queued_at"].dt.tz) == "UTC"
    assert frame["wait_s"].dtype == "float64" and len(frame) == 2
    assert json.loads(log.path.read_text().splitlines()[0])["queued_at"] == start.isoformat()
