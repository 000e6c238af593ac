"""``ThrottledText`` without a frontend: escaping, the rate bound, forced and timer flushes."""

from __future__ import annotations

import html

import ipywidgets  # type: ignore[import-untyped]
import pytest

from elynav_nb.widgets.throttle import ThrottledText

from .helpers import wait_until


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_two_thousand_deltas_flush_a_few_times_and_keep_every_character() -> None:
    clock = SimulatedClock()
    stream = ThrottledText(ipywidgets.HTML(), min_interval=0.1, clock=clock)
    pieces = [f"<{index % 100:02d}&" for index in range(2000)]
    for piece in pieces:
        stream.write(piece)
        clock.now += 0.0006  # 2,000 deltas in 1.2 simulated seconds
    stream.flush()
    assert stream.widget.value == html.escape("".join(pieces))
    assert stream.written_chunks == 2000
    # one flush at the first delta, then at most one per 0.1 s of the 1.2 s stream, plus the final one
    assert 2 <= stream.flush_count <= 15
    assert not stream.pending


def test_interval_bounds_the_flushes() -> None:
    clock = SimulatedClock()
    fast = ThrottledText(min_interval=0.05, clock=clock)
    slow = ThrottledText(min_interval=0.2, clock=clock)
    for _ in range(2000):
        fast.write("abcde")
        slow.write("abcde")
        clock.now += 0.0006
    fast.flush()
    slow.flush()
    assert fast.widget.value == slow.widget.value == "abcde" * 2000
    assert slow.flush_count < fast.flush_count < 100


def test_markup_is_kept_and_text_is_escaped() -> None:
    stream = ThrottledText(min_interval=0.0)
    stream.write_html("<span class='x'>")
    stream.write("<script>alert('x')</script>")
    stream.write_html("</span>")
    assert stream.widget.value == "<span class='x'>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</span>"
    assert stream.flush_count == 3


def test_flush_with_empty_buffer_sends_nothing() -> None:
    stream = ThrottledText()
    stream.flush()
    stream.write("")
    assert stream.flush_count == 0
    assert stream.widget.value == ""


def test_without_a_loop_text_waits_for_the_next_write_or_flush() -> None:
    clock = SimulatedClock()
    stream = ThrottledText(min_interval=0.1, clock=clock)
    stream.write("a")
    stream.write("b")
    assert stream.widget.value == "a"
    assert stream.pending
    stream.flush()
    assert stream.widget.value == "ab"


@pytest.mark.anyio
async def test_timer_flushes_trailing_text_without_another_write() -> None:
    clock = SimulatedClock()
    stream = ThrottledText(min_interval=0.05, clock=clock)
    stream.write("first ")
    stream.write("second")  # inside the interval: buffered, a timer is armed
    assert stream.widget.value == "first "
    assert await wait_until(lambda: not stream.pending, timeout=10)
    assert stream.widget.value == "first second"
    assert stream.flush_count == 2
