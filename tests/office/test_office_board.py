"""The office board, headless: live rows, a Cancel click that ends a running ask, Follow, History."""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.office import USER
from elynav_nb.widgets import OfficeBoard, TurnView

from .conftest import worker
from .helpers import wait_until

pytestmark = pytest.mark.anyio


async def test_the_board_shows_busy_employees_and_a_cancel_click_ends_the_running_ask(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    board = office.board()
    assert isinstance(board, OfficeBoard) and office.board() is board  # one live board per office
    assert "0 busy" in board.status_line.value and board.asks_box.children == ()

    running = office.submit("w-a", "@standin slow 20\nlong work")
    queued = office.submit("w-a", "next")
    assert await wait_until(lambda: len(board.rows) == 2 and "1 busy" in board.status_line.value)
    assert "1 queued" in board.status_line.value
    assert "w-a</b>" in board.employees_table.value and ">busy<" in board.employees_table.value
    assert [row.ask for row in (board.rows[running.id], board.rows[queued.id])] == [running, queued]
    assert board.asks_box.children == (board.rows[running.id].widget, board.rows[queued.id].widget)

    board.rows[running.id].cancel_button.click()  # acts as the user, while the ask runs
    reply = await asyncio.wait_for(running, timeout=10)
    assert reply.outcome == "cancelled" and reply.cancelled_by == USER
    assert (await queued).outcome == "done"  # the queue went on
    assert await wait_until(lambda: board.rows == {} and "0 busy" in board.status_line.value)
    assert board.asks_box.children == ()
    assert (
        board.message.value == f"ask <code>{running.id}</code>: cancelled"
    )  # the click's outcome, once known


async def test_follow_shows_the_live_transcript_of_the_busy_employee(make_office):
    office = await make_office([worker("w-a")])
    board = office.board()
    board.follow("w-a")
    assert "idle" in board.follow_title.value and board.follow_area.children == ()
    ask = office.submit("w-a", "@standin slow 1\nstreamed answer")
    assert await wait_until(lambda: len(board.follow_area.children) == 1)  # its new turn is followed
    assert "working for user" in board.follow_title.value
    await ask
    view = board.follow_area.children[0]
    turn_view = _view_of(ask)
    assert turn_view is not None and view is turn_view.widget
    assert "its ask for user ended done" in board.follow_title.value
    assert await wait_until(lambda: "streamed answer" in turn_view.transcript.widget.value)


def _view_of(ask) -> TurnView | None:
    from elynav_nb._display import view_for

    return view_for(ask.turn)


async def test_a_refused_click_says_why_and_the_history_button_shows_every_ask(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    board = office.board()
    await office.ask("w-a", "first")
    await office.ask("w-b", "second", sender="w-a")
    board.cancel("no-such-ask")
    assert "ASK_NOT_FOUND" in board.message.value
    board.history_button.click()
    table = board.history_table.value
    assert "2 asks" in table and "first" in table and "second" in table and "w-a" in table
    renders = board.render_count
    await office.ask("w-a", "while open")
    assert await wait_until(lambda: board.render_count > renders)
    board.close()
    renders = board.render_count
    await office.ask("w-a", "after close")
    await asyncio.sleep(0.3)
    assert board.closed and board.render_count == renders  # a closed board no longer follows the office


async def test_a_tool_outside_the_agents_list_asks_the_user_on_the_board(make_office, tmp_path):
    office = await make_office([worker("w-a")])
    board = office.board()
    ask = office.submit("w-a", "@standin bash touch rapport.txt")
    assert await wait_until(lambda: office.employee("w-a").status == "asks permission")
    assert await wait_until(lambda: ask.id in board.rows and len(board.rows[ask.id].prompts) == 1)
    prompt = next(iter(board.rows[ask.id].prompts.values()))
    assert prompt.request.tool_name == "Bash" and prompt.request.input["command"] == "touch rapport.txt"
    assert "asks permission" in board.employees_table.value
    prompt.allow_button.click()  # the user allows it from the board
    reply = await asyncio.wait_for(ask, timeout=20)
    assert reply.outcome == "done" and (office.workspace / "rapport.txt").exists()


async def test_an_unanswered_tool_prompt_is_denied_after_its_bound_and_the_queue_goes_on(make_office):
    office = await make_office([worker("w-a")], permission_timeout=0.5)
    first = office.submit("w-a", "@standin bash touch jamais.txt")
    second = office.submit("w-a", "et ensuite ?")
    replies = await asyncio.wait_for(asyncio.gather(first, second), timeout=30)
    assert [reply.outcome for reply in replies] == ["done", "done"]
    assert not (office.workspace / "jamais.txt").exists()
    denied = [event for event in replies[0].events if getattr(event, "is_error", False)]
    assert denied  # the tool result says it was not allowed
