"""What a stream of small text deltas costs on the widget comm: per-delta updates vs ``ThrottledText``.

Where it sits: a plain benchmark script (not a test) for ``elynav_nb.widgets``. The peer is the
naive way, ``HTML.value += delta`` for every delta; notebook-patterns.md §2.1 gives its figures.

How it measures: a recording comm replaces ipywidgets' default one (``comm.create_comm`` is
swapped before any widget exists), so every state update a widget would send to a frontend is
counted with the size of its JSON. Each strategy receives the same ``--deltas`` deltas of 5
characters arriving evenly over ``--stream-seconds`` on a simulated clock (no sleeping; the
throttle reads that clock), followed by the final flush a view does at the end of a turn. CPU time
(``time.process_time``) includes serialising every message, as a real comm would.

Rows:
  html +=            ``widget.value += delta`` per delta (the peer)
  throttled 50 ms    ``ThrottledText(min_interval=0.05)``
  throttled 100 ms   ``ThrottledText(min_interval=0.1)`` (the ``TurnView`` default)
  throttled 200 ms   ``ThrottledText(min_interval=0.2)``
  output append      ``Output.append_stdout(delta)`` per delta (re-sends the whole outputs list)

``--end-to-end`` adds one row: a real ``TurnView`` on a real ``AgentRunner`` driving the fake
streaming CLI of the widget tests (``tests/widgets/fake_stream_cli.py``) with the same number of
deltas, counting the messages of every widget of the view.

Run:  python benchmarks/widgets_throttle.py [--deltas 2000] [--stream-seconds 1.25] [--end-to-end]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import comm
from comm.base_comm import BaseComm

REPOSITORY = Path(__file__).resolve().parent.parent
DELTA = "abcde"


class RecordingComm(BaseComm):
    """A comm that sends nothing and counts the ``comm_msg`` messages and their JSON bytes."""

    messages = 0
    bytes_sent = 0

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        if msg_type != "comm_msg":
            return
        RecordingComm.messages += 1
        RecordingComm.bytes_sent += len(json.dumps(data, separators=(",", ":")))

    @classmethod
    def reset(cls) -> None:
        cls.messages = 0
        cls.bytes_sent = 0


def install_recording_comm() -> None:
    def create_recording_comm(**arguments: Any) -> BaseComm:
        return RecordingComm(**arguments)

    comm.create_comm = create_recording_comm


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_html_per_delta(deltas: int, step: float) -> int:
    import ipywidgets

    widget = ipywidgets.HTML()
    RecordingComm.reset()
    for _ in range(deltas):
        widget.value += DELTA
    return len(widget.value)


def run_output_per_delta(deltas: int, step: float) -> int:
    import ipywidgets

    widget = ipywidgets.Output()
    RecordingComm.reset()
    for _ in range(deltas):
        widget.append_stdout(DELTA)
    return sum(len(output["text"]) for output in widget.outputs)


def throttled(min_interval: float) -> Callable[[int, float], int]:
    def run(deltas: int, step: float) -> int:
        import ipywidgets

        from elynav_nb.widgets.throttle import ThrottledText

        clock = SimulatedClock()
        stream = ThrottledText(ipywidgets.HTML(), min_interval=min_interval, clock=clock)
        RecordingComm.reset()
        for _ in range(deltas):
            stream.write(DELTA)
            clock.now += step
        stream.flush()
        return len(stream.widget.value)

    return run


def measure(name: str, run: Callable[[int, float], int], deltas: int, step: float) -> dict[str, Any]:
    started = time.process_time()
    final_length = run(deltas, step)
    cpu = time.process_time() - started
    if final_length != deltas * len(DELTA):
        raise SystemExit(
            f"{name}: the final text has {final_length} characters, expected {deltas * len(DELTA)}"
        )
    return {"name": name, "messages": RecordingComm.messages, "bytes": RecordingComm.bytes_sent, "cpu": cpu}


async def end_to_end(deltas: int, stream_seconds: float) -> dict[str, Any]:
    from elynav_nb.agents.runner import AgentRunner
    from elynav_nb.widgets import TurnView

    fake_cli = REPOSITORY / "tests" / "widgets" / "fake_stream_cli.py"
    pause_per_ten = stream_seconds / max(1, deltas) * 10
    with tempfile.TemporaryDirectory() as workspace:
        runner = AgentRunner(
            None,
            workspace,
            executable=[sys.executable, str(fake_cli)],
            environment={
                "FAKE_CLI_MODE": "stream",
                "FAKE_DELTAS": str(deltas),
                "FAKE_DELTA_PAUSE": f"{pause_per_ten:.6f}",
            },
        )
        try:
            await runner.start()
            RecordingComm.reset()
            started = time.process_time()
            turn = runner.send("stream")
            view = TurnView(turn)
            result = await view.wait()
            cpu = time.process_time() - started
        finally:
            await runner.stop()
    assert result is not None and result.outcome == "completed", result
    return {
        "name": f"TurnView end-to-end ({view.transcript.flush_count} flushes)",
        "messages": RecordingComm.messages,
        "bytes": RecordingComm.bytes_sent,
        "cpu": cpu,
    }


def print_table(rows: list[dict[str, Any]], deltas: int, stream_seconds: float) -> None:
    peer = rows[0]
    print(
        f"{deltas} deltas of {len(DELTA)} characters over {stream_seconds:g} s (simulated clock), final value "
        f"{deltas * len(DELTA) / 1000:.1f} kB"
    )
    header = f"{'strategy':<40} {'messages':>9} {'MB sent':>9} {'CPU s':>7} {'msgs/peer':>10} {'bytes/peer':>11} {'CPU/peer':>9}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['name']:<40} {row['messages']:>9} {row['bytes'] / 1e6:>9.3f} {row['cpu']:>7.3f} "
            f"{row['messages'] / peer['messages']:>10.4f} {row['bytes'] / peer['bytes']:>11.4f} "
            f"{row['cpu'] / peer['cpu']:>9.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--stream-seconds", type=float, default=1.25)
    parser.add_argument(
        "--skip-output", action="store_true", help="leave out the slow Output.append_stdout row"
    )
    parser.add_argument("--end-to-end", action="store_true", help="add a real TurnView on the fake CLI")
    arguments = parser.parse_args()
    install_recording_comm()
    import ipywidgets  # noqa: F401  (imported before any timing)

    import elynav_nb.widgets  # noqa: F401

    step = arguments.stream_seconds / arguments.deltas
    strategies: list[tuple[str, Callable[[int, float], int]]] = [
        ("html += per delta (peer)", run_html_per_delta),
        ("ThrottledText 50 ms", throttled(0.05)),
        ("ThrottledText 100 ms (TurnView default)", throttled(0.1)),
        ("ThrottledText 200 ms", throttled(0.2)),
    ]
    if not arguments.skip_output:
        strategies.append(("Output.append_stdout per delta", run_output_per_delta))
    rows = [measure(name, run, arguments.deltas, step) for name, run in strategies]
    if arguments.end_to_end:
        rows.append(asyncio.run(end_to_end(arguments.deltas, arguments.stream_seconds)))
    print_table(rows, arguments.deltas, arguments.stream_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
