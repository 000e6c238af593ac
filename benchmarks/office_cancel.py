"""Cancel latency of an office ask: ``ask.cancel()`` against the bare runner's ``turn.cancel()``.

Where it sits: a plain benchmark script (not a test). There is no public peer with an office, so the
peer is our own ``AgentRunner`` driving the same embedded stand-in CLI (``executable="standin"``)
with the same prompts: the ratio isolates what the office adds (its ask bookkeeping, the listener
calls, the history records, the cascade). Three scenarios:

  stream    ``@standin slow <s>``: a slowly streamed reply; cancelled as soon as the first text
            delta arrived (watched on ``ask.turn`` / the runner's turn)
  tool      ``@standin sleep-tool <s>``: a Bash ``sleep`` in its own session; cancelled once the
            ``sleep`` process exists under the CLI
  cascade5  six employees A..F chained by real processes: A's Bash runs ``elynav ask w-b ...``, whose
            CLI's Bash runs ``elynav ask w-c ...`` and so on down to F, which runs
            ``@standin sleep-tool <s>``; A's ask is cancelled once all six asks are running and the
            ``sleep`` exists. Two peers, interleaved: one runner's tool cancel (the ratio says
            whether the chain costs one interrupt round or depth x rounds), and six runners in a
            sleep tool each, cancelled at once (the same six interrupts on the same two cores,
            without the office, the socket and the five ``elynav ask`` processes)

How it measures, per repetition (one office and its peer runner(s) per scenario, kept for every repetition,
so each repetition after the first also checks that the CLIs survived the interrupt; office and
runner repetitions alternate, ABAB, because the shared machine is noisy):

  reply ms     from ``ask.cancel()`` (``turn.cancel()``) to ``await ask`` (``await turn``) returning
  all ms       to the last ask of the chain settled (the office's ``ended`` listener call; runner:
               = reply; six runners: the sixth result)
  idle ms      from the same instant to the later of (1) every process the CLI(s) had started being
               gone (dead or a zombie): their descendants via psutil, snapshot before the cancel,
               polled in ``/proc/<pid>/stat`` by a thread every 0.5 ms, re-scanned once the owner is
               idle; and (2) the employee(s) idle: the office's ``ended`` listener call, made in the
               same step that sets ``employee.current = None`` (runner: the result reaching the
               caller; the runner drops its turn just before settling it)
  procs ms     (1) alone
  levels       cascade5 only: median ms to each of the six ``ended`` events, A (the root) to F (the
               leaf), and to each of the six runners' results: the office cancels leaf first, like
               the six-runner peer, so a small staircase is the order the six CLIs get the two cores;
               one interrupt round per level would add a full round (the single cancel) per level
  CLIs ok      every CLI of the office (runner) still runs with the same pid after the repetition
  over bound   repetitions whose idle time exceeded ``--interrupt-timeout`` (the office's promise:
               one interrupt round, whatever the depth)

Processes still running ``--idle-timeout`` seconds after a cancel show as ``never`` and are killed
by the script; at the end it checks that nothing it started is left.

Run:  python benchmarks/office_cancel.py [--repeat 20] [--cascade-repeat 10]
          [--scenarios stream,tool,cascade5] [--seconds 30] [--sleep-seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from office_common import (
    BenchmarkFailed,
    isolated_standin_home,
    percentile,
    report_processes_left,
    run_script,
    worker,
)
from runner_cancel import end_leftovers, process_is_alive, process_is_gone

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner, Turn
    from elynav_nb.office import Ask, Office

CHAIN = ["w-a", "w-b", "w-c", "w-d", "w-e", "w-f"]
TRIGGER_TIMEOUT_S = 60.0
RESULT_TIMEOUT_S = 60.0
POLL_INTERVAL_S = 0.0005
SCENARIOS = ("stream", "tool", "cascade5")


@dataclass
class CancelSample:
    """One cancelled ask (or turn)."""

    reply_ms: float
    all_replies_ms: float
    idle_ms: float
    processes_gone_ms: float
    cli_survived: bool
    outcome: str
    level_ended_ms: tuple[float, ...] = ()


@dataclass
class ScenarioResult:
    client: str
    scenario: str
    samples: list[CancelSample] = field(default_factory=list)
    note: str = ""


# -- process helpers ----------------------------------------------------------------------------------


def live_descendants(cli_pids: Iterable[int]) -> list[psutil.Process]:
    """Every descendant of the given CLIs that still runs (zombies excluded)."""
    found: list[psutil.Process] = []
    for cli_pid in cli_pids:
        try:
            children = psutil.Process(cli_pid).children(recursive=True)
        except psutil.Error:
            continue
        found.extend(child for child in children if not process_is_gone(child.pid))
    return found


def command_line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


async def wait_for_sleep_process(cli_pid: int) -> list[int]:
    """Wait until a ``sleep`` runs under the CLI (the Bash tool of ``@standin sleep-tool``)."""
    deadline = time.monotonic() + TRIGGER_TIMEOUT_S
    while time.monotonic() < deadline:
        descendants = live_descendants([cli_pid])
        if any(command_line(process).startswith("sleep ") for process in descendants):
            return [process.pid for process in descendants]
        await asyncio.sleep(0.005)
    raise BenchmarkFailed(
        f"no sleep process appeared under the CLI (pid {cli_pid}) within {TRIGGER_TIMEOUT_S:g} s"
    )


class ProcessWatcher:
    """A thread that records when every descendant of the CLIs is gone (dead or a zombie).

    Polls every 0.5 ms the pids known before the cancel; once they are all gone it re-scans the
    CLIs' descendants (psutil), so a process started after the snapshot counts too, and it keeps
    going until the owner (employees, runner) is idle as well, with one last re-scan then. The
    recorded instant is the poll that saw the set empty, never the end of a re-scan.
    """

    def __init__(
        self, cli_pids: list[int], known_pids: list[int], is_idle: Callable[[], bool], bound_s: float
    ) -> None:
        self.cli_pids = list(cli_pids)
        self.known_pids = list(known_pids)
        self.is_idle = is_idle
        self.bound_s = bound_s
        self.gone_at: float | None = None
        self.leftovers: list[int] = []
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _poll(self) -> None:
        deadline = time.perf_counter() + self.bound_s
        remaining = list(self.known_pids)
        empty_since: float | None = None
        while time.perf_counter() < deadline:
            remaining = [pid for pid in remaining if not process_is_gone(pid)]
            if not remaining:
                if empty_since is None:
                    empty_since = time.perf_counter()
                if self.is_idle():  # re-scan once the owner is idle (a scan walks all of /proc)
                    fresh = [process.pid for process in live_descendants(self.cli_pids)]
                    if not fresh:
                        self.gone_at = empty_since
                        return
                    remaining, empty_since = fresh, None  # started after the snapshot: watch them too
            time.sleep(POLL_INTERVAL_S)
        self.leftovers = remaining

    def join(self) -> None:
        self._thread.join(self.bound_s + 5.0)


def elapsed_ms(started: float, at: float | None) -> float:
    return (at - started) * 1000 if at is not None else float("inf")


def idle_ms(started: float, processes_gone_at: float | None, owner_idle_at: float) -> float:
    """Cancel -> both the processes gone and the owner idle (the later of the two instants)."""
    if processes_gone_at is None:
        return float("inf")
    return max(0.0, (max(processes_gone_at, owner_idle_at) - started) * 1000)


# -- agents and prompts -------------------------------------------------------------------------------


def chain_prompt(agents: list[str], last: str) -> str:
    """``@standin ask`` nested on one line: each agent asks the next; the last one runs ``last``."""
    text = last
    for agent in reversed(agents[1:]):
        text = f"@standin ask {agent} {text}"
    return text


def prompt_for(scenario: str, number: int, args: argparse.Namespace) -> str:
    if scenario == "stream":
        return f"@standin slow {args.seconds:g}\nstreamed reply {number}"
    if scenario == "tool":
        return f"@standin sleep-tool {args.sleep_seconds:g}"
    return chain_prompt(CHAIN, f"@standin sleep-tool {args.sleep_seconds:g}")


# -- one repetition: office ---------------------------------------------------------------------------


async def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise BenchmarkFailed(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(0.005)


async def first_text_delta(turn: Turn) -> None:
    from elynav_nb.agents.events import TextDelta

    async with asyncio.timeout(TRIGGER_TIMEOUT_S):
        async for event in turn:
            if isinstance(event, TextDelta):
                return
    raise BenchmarkFailed(f"the turn ended before its first text delta ({turn.status})")


def office_cli_pids(office: Office, names: list[str]) -> list[int]:
    pids = [office.employee(name).runner.pid for name in names]
    if any(pid is None for pid in pids):
        raise BenchmarkFailed(f"an employee has no CLI running: {dict(zip(names, pids, strict=True))}")
    return [pid for pid in pids if pid is not None]


async def office_repetition(
    office: Office, scenario: str, number: int, args: argparse.Namespace, seen_pids: set[int]
) -> CancelSample:
    names = CHAIN if scenario == "cascade5" else CHAIN[:1]
    root = office.submit(names[0], prompt_for(scenario, number, args))
    await wait_until(lambda: root.turn is not None or root.done, TRIGGER_TIMEOUT_S, "the ask's turn")
    if root.done:
        raise BenchmarkFailed(f"office/{scenario}: the ask ended before the trigger: {root.reply}")
    asks: list[Ask] = [root]
    if scenario == "stream":
        assert root.turn is not None
        await first_text_delta(root.turn)
    elif scenario == "tool":
        await wait_for_sleep_process(office_cli_pids(office, names)[0])
    else:
        await wait_until(
            lambda: sum(1 for ask in office.asks if ask.status == "running") == len(CHAIN) or root.done,
            TRIGGER_TIMEOUT_S,
            "six running asks",
        )
        if root.done:
            raise BenchmarkFailed(f"office/cascade5: the root ask ended before the trigger: {root.reply}")
        asks = sorted(office.asks, key=lambda ask: CHAIN.index(ask.agent))
        await wait_for_sleep_process(office.employee(CHAIN[-1]).runner.pid or -1)
    cli_pids = office_cli_pids(office, names)
    known = [process.pid for process in live_descendants(cli_pids)]
    seen_pids.update(known)
    employees = [office.employee(name) for name in names]
    ended_at: dict[str, float] = {}

    def on_event(event: str, ask: Ask | None) -> None:
        # "ended" is notified by Office._finish in the same step that sets employee.current = None
        if event == "ended" and ask is not None:
            ended_at[ask.id] = time.perf_counter()

    office.add_listener(on_event)
    watcher = ProcessWatcher(
        cli_pids, known, lambda: all(employee.current is None for employee in employees), args.idle_timeout
    )
    watcher.start()
    started = time.perf_counter()
    try:
        root.cancel()
        async with asyncio.timeout(RESULT_TIMEOUT_S):
            reply = await root
            reply_at = time.perf_counter()
            replies = await asyncio.gather(*asks)
        await asyncio.to_thread(watcher.join)
    finally:
        office.remove_listener(on_event)
    end_leftovers(watcher.leftovers)
    level_ended = tuple(elapsed_ms(started, ended_at.get(ask.id)) for ask in asks)
    all_at = employees_idle_at = max(ended_at.get(ask.id, float("inf")) for ask in asks)
    if any(employee.current is not None for employee in employees):
        employees_idle_at = float("inf")
    survived = office_cli_pids(office, names) == cli_pids and all(process_is_alive(pid) for pid in cli_pids)
    outcomes = {f"{one.outcome}/{one.error_code or '-'}" for one in replies}
    outcome = (
        reply.outcome if len(outcomes) == 1 and reply.outcome == "cancelled" else ",".join(sorted(outcomes))
    )
    if office.asks:
        outcome += f" ({len(office.asks)} asks left!)"
    return CancelSample(
        elapsed_ms(started, reply_at),
        elapsed_ms(started, all_at),
        idle_ms(started, watcher.gone_at, employees_idle_at),
        max(0.0, elapsed_ms(started, watcher.gone_at)),
        survived,
        outcome,
        level_ended,
    )


# -- one repetition: the bare runner (the peer) -------------------------------------------------------


async def runner_repetition(
    runner: AgentRunner, scenario: str, number: int, args: argparse.Namespace, seen_pids: set[int]
) -> CancelSample:
    turn = runner.send(prompt_for(scenario, number, args))
    cli_pid = runner.pid
    if cli_pid is None:
        raise BenchmarkFailed("the runner has no CLI running")
    if scenario == "stream":
        await first_text_delta(turn)
    else:
        await wait_for_sleep_process(cli_pid)
    known = [process.pid for process in live_descendants([cli_pid])]
    seen_pids.update(known)
    watcher = ProcessWatcher([cli_pid], known, lambda: not runner.busy, args.idle_timeout)
    watcher.start()
    started = time.perf_counter()
    turn.cancel()
    async with asyncio.timeout(RESULT_TIMEOUT_S):
        result = await turn
    reply_at = time.perf_counter()  # the runner is idle from here (it drops the turn before settling it)
    await asyncio.to_thread(watcher.join)
    end_leftovers(watcher.leftovers)
    survived = runner.pid == cli_pid and process_is_alive(cli_pid)
    return CancelSample(
        elapsed_ms(started, reply_at),
        elapsed_ms(started, reply_at),
        idle_ms(started, watcher.gone_at, reply_at if not runner.busy else float("inf")),
        max(0.0, elapsed_ms(started, watcher.gone_at)),
        survived,
        result.outcome,
    )


async def runner_group_repetition(
    runners: list[AgentRunner], number: int, args: argparse.Namespace, seen_pids: set[int]
) -> CancelSample:
    """Six runners in a sleep tool each, all cancelled at once: the cascade's work without the office.

    Cancelled leaf first, as ``Office._cancel`` does (children before the ask itself); "reply" is
    the result of the turn cancelled last (the office's root), "all" the last of the six results
    settled (a done callback of each turn's future).
    """
    turns = [runner.send(prompt_for("tool", number, args)) for runner in runners]
    cli_pids = [runner.pid for runner in runners]
    if any(pid is None for pid in cli_pids):
        raise BenchmarkFailed("a runner of the group has no CLI running")
    pids = [pid for pid in cli_pids if pid is not None]
    for pid in pids:
        await wait_for_sleep_process(pid)
    known = [process.pid for process in live_descendants(pids)]
    seen_pids.update(known)
    watcher = ProcessWatcher(
        pids, known, lambda: not any(runner.busy for runner in runners), args.idle_timeout
    )
    watcher.start()
    started = time.perf_counter()
    settled_at: dict[int, float] = {}

    def settled(index: int) -> Callable[[object], None]:
        def record(_: object) -> None:
            settled_at.setdefault(index, time.perf_counter())

        return record

    for index in reversed(range(len(turns))):
        turns[index].cancel().add_done_callback(settled(index))
    async with asyncio.timeout(RESULT_TIMEOUT_S):
        result = await turns[0]
        reply_at = time.perf_counter()
        results = await asyncio.gather(*(turn for turn in turns))
    all_at = max(settled_at.values())
    level_ended = tuple(elapsed_ms(started, settled_at.get(index)) for index in range(len(turns)))
    await asyncio.to_thread(watcher.join)
    end_leftovers(watcher.leftovers)
    survived = [runner.pid for runner in runners] == cli_pids and all(process_is_alive(pid) for pid in pids)
    outcomes = {one.outcome for one in results}
    return CancelSample(
        elapsed_ms(started, reply_at),
        elapsed_ms(started, all_at),
        idle_ms(
            started, watcher.gone_at, all_at if not any(runner.busy for runner in runners) else float("inf")
        ),
        max(0.0, elapsed_ms(started, watcher.gone_at)),
        survived,
        result.outcome if outcomes == {result.outcome} else ",".join(sorted(outcomes)),
        level_ended,
    )


# -- scenarios ----------------------------------------------------------------------------------------


SINGLE_PEER = "runner (1 tool)"
GROUP_PEER = "6 runners at once"


async def run_scenario(
    scenario: str, repeat: int, args: argparse.Namespace, folder: Path, seen_pids: set[int]
) -> list[ScenarioResult]:
    """One office and its peer runner(s), kept for every repetition; repetitions alternate ABAB (ABCABC)."""
    from elynav_nb.agents.drivers.process import StopBounds
    from elynav_nb.agents.runner import AgentRunner
    from elynav_nb.office import Office

    names = CHAIN if scenario == "cascade5" else CHAIN[:1]
    bounds = StopBounds()
    office = Office(
        folder / f"office-{scenario}",
        [worker(name) for name in names],
        executable="standin",
        interrupt_timeout=args.interrupt_timeout,
        stop_bounds=bounds,
    )
    group_size = len(CHAIN) if scenario == "cascade5" else 0
    runners: list[AgentRunner] = []
    for index in range(1 + group_size):
        runner_folder = folder / f"runner-{scenario}-{index}"
        runner_folder.mkdir()
        runners.append(
            AgentRunner(
                worker(CHAIN[index % len(CHAIN)]),
                runner_folder,
                executable="standin",
                interrupt_timeout=args.interrupt_timeout,
                stop_bounds=bounds,
            )
        )
    single, group = runners[0], runners[1:]
    ours = ScenarioResult("office", scenario)
    peer = ScenarioResult(SINGLE_PEER if scenario == "cascade5" else "runner", scenario)
    group_peer = ScenarioResult(GROUP_PEER, scenario)
    try:
        await office.start()
        for name in names:  # start every CLI first: spawning is not what is measured
            reply = await office.ask(name, "warm up")
            if not reply.ok:
                raise BenchmarkFailed(f"the warm-up ask to {name} failed: {reply}")
        for runner in runners:
            await runner.start()
        first_pids = office_cli_pids(office, names) + [runner.pid or -1 for runner in runners]
        for number in range(repeat):
            ours.samples.append(await office_repetition(office, scenario, number, args, seen_pids))
            peer_scenario = "tool" if scenario == "cascade5" else scenario
            peer.samples.append(await runner_repetition(single, peer_scenario, number, args, seen_pids))
            if group:
                group_peer.samples.append(await runner_group_repetition(group, number, args, seen_pids))
        last_pids = office_cli_pids(office, names) + [runner.pid or -1 for runner in runners]
        if first_pids != last_pids:
            ours.note = f"CLI pids changed during the run: {first_pids} -> {last_pids}"
        after = await office.ask(names[0], "still serving?")
        if not after.ok:
            ours.note += f" the office did not serve after the cancels: {after.outcome}"
    finally:
        await office.stop()
        await asyncio.gather(*(runner.stop() for runner in runners), return_exceptions=True)
    return [ours, peer, group_peer] if group else [ours, peer]


# -- report -------------------------------------------------------------------------------------------


def ms_text(value: float) -> str:
    return "never" if value == float("inf") else f"{value:.1f}"


def print_table(results: list[ScenarioResult], bound_ms: float) -> None:
    print()
    header = (
        f"{'scenario':<8} {'client':<18} {'n':>3} {'reply med':>9} {'p99':>7} {'max':>7} {'all med':>8} "
        f"{'idle med':>8} {'p99':>7} {'max':>7} {'procs med':>9} {'>bound':>6} {'CLIs ok':>7}  outcomes"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        samples = result.samples
        if not samples:
            print(f"{result.scenario:<8} {result.client:<18}   0  {result.note}")
            continue
        reply = [sample.reply_ms for sample in samples]
        all_replies = [sample.all_replies_ms for sample in samples]
        idle = [sample.idle_ms for sample in samples]
        gone = [sample.processes_gone_ms for sample in samples]
        over = sum(1 for value in idle if value > bound_ms)
        survived = sum(1 for sample in samples if sample.cli_survived)
        outcomes = collections.Counter(sample.outcome for sample in samples)
        outcome_text = ", ".join(f"{name} x{count}" for name, count in outcomes.items())
        print(
            f"{result.scenario:<8} {result.client:<18} {len(samples):>3} {ms_text(statistics.median(reply)):>9} "
            f"{ms_text(percentile(reply, 0.99)):>7} {ms_text(max(reply)):>7} {ms_text(statistics.median(all_replies)):>8} "
            f"{ms_text(statistics.median(idle)):>8} {ms_text(percentile(idle, 0.99)):>7} {ms_text(max(idle)):>7} "
            f"{ms_text(statistics.median(gone)):>9} {over:>6} {f'{survived}/{len(samples)}':>7}  {outcome_text} {result.note}"
        )
    print(
        "ms from the cancel call; reply = the cancelled ask's Reply (runner: TurnResult) reaches the caller; "
        "all = the last ask of the chain settled;\nidle = no descendant process of the CLI(s) left (zombies count as gone) "
        f"and the employee(s) idle; procs = the descendants alone; >bound = idle above {bound_ms:g} ms; "
        "never = still running at the watch bound (then killed)"
    )
    for result in results:
        levels = [sample.level_ended_ms for sample in result.samples if len(sample.level_ended_ms) > 1]
        if levels:
            medians = [statistics.median(level[index] for level in levels) for index in range(len(levels[0]))]
            text = "  ".join(
                f"{name[-1].upper()} {ms_text(value)}" for name, value in zip(CHAIN, medians, strict=False)
            )
            what = (
                "ask's end (A = root ... F = leaf)"
                if result.client == "office"
                else "turn's result (A = cancelled last, like the root ... F = cancelled first)"
            )
            print(f"{result.scenario} {result.client}: median ms from the cancel to each {what}: {text}")
    by_key = {(result.client, result.scenario): result for result in results}
    lines = []
    for scenario in ("stream", "tool"):
        ours, peer = by_key.get(("office", scenario)), by_key.get(("runner", scenario))
        if ours and peer and ours.samples and peer.samples:
            lines.append(
                f"  {scenario:<8}: office / runner  reply {ratio_text(ours, peer, 'reply_ms')}, idle {ratio_text(ours, peer, 'idle_ms')}"
            )
    cascade = by_key.get(("office", "cascade5"))
    single = by_key.get((SINGLE_PEER, "cascade5"))
    group = by_key.get((GROUP_PEER, "cascade5"))
    if cascade and single and cascade.samples and single.samples:
        lines.append(
            f"  cascade5: office chain / {SINGLE_PEER}  reply {ratio_text(cascade, single, 'reply_ms')}, "
            f"all {ratio_text(cascade, single, 'all_replies_ms')}, idle {ratio_text(cascade, single, 'idle_ms')}"
        )
    if cascade and group and cascade.samples and group.samples:
        lines.append(
            f"  cascade5: office chain / {GROUP_PEER}  reply {ratio_text(cascade, group, 'reply_ms')}, "
            f"all {ratio_text(cascade, group, 'all_replies_ms')}, idle {ratio_text(cascade, group, 'idle_ms')}"
        )
    tool = by_key.get(("office", "tool"))
    if cascade and tool and cascade.samples and tool.samples:
        lines.append(
            f"  cascade5: office chain / office single tool cancel  reply {ratio_text(cascade, tool, 'reply_ms')}, "
            f"idle {ratio_text(cascade, tool, 'idle_ms')}"
        )
    if lines:
        print()
        print("Ratios of the medians (lower is better)")
        print("\n".join(lines))


def ratio_text(ours: ScenarioResult, peer: ScenarioResult, attribute: str, peer_factor: float = 1.0) -> str:
    ours_median = statistics.median(getattr(sample, attribute) for sample in ours.samples)
    peer_median = statistics.median(getattr(sample, attribute) for sample in peer.samples) * peer_factor
    if peer_median in (0.0, float("inf")) or ours_median == float("inf"):
        return "n/a"
    return f"{ours_median / peer_median:.2f}x"


async def run_all(args: argparse.Namespace) -> tuple[list[ScenarioResult], list[int]]:
    results: list[ScenarioResult] = []
    seen_pids: set[int] = set()
    for scenario in args.scenarios.split(","):
        if scenario not in SCENARIOS:
            raise BenchmarkFailed(f"unknown scenario {scenario!r}; choose among {', '.join(SCENARIOS)}")
        repeat = args.cascade_repeat if scenario == "cascade5" else args.repeat
        with tempfile.TemporaryDirectory(prefix=f"elynav-office-cancel-{scenario}-") as folder:
            pair = await run_scenario(scenario, repeat, args, Path(folder), seen_pids)
        results.extend(pair)
        print(f"{scenario}: " + ", ".join(f"{len(one.samples)} {one.client}" for one in pair), flush=True)
    left = [
        child.pid for child in psutil.Process().children(recursive=True) if not process_is_gone(child.pid)
    ]
    left += [pid for pid in seen_pids if not process_is_gone(pid)]
    return results, sorted(set(left))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=20, help="cancels per client for stream and tool (default 20)"
    )
    parser.add_argument(
        "--cascade-repeat", type=int, default=10, help="cancelled chains for cascade5 (default 10)"
    )
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated: stream, tool, cascade5"
    )
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="length of the slowly streamed reply (default 30)"
    )
    parser.add_argument(
        "--sleep-seconds", type=float, default=60.0, help="length of the sleep tool (default 60)"
    )
    parser.add_argument(
        "--interrupt-timeout",
        type=float,
        default=5.0,
        help="the runners' interrupt bound, also the >bound line (default 5)",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=15.0, help="how long the watcher waits for idle (default 15)"
    )
    args = parser.parse_args()
    with isolated_standin_home("elynav-office-cancel-"):
        results, left = asyncio.run(run_all(args))
    print_table(results, args.interrupt_timeout * 1000)
    report_processes_left(left)
    if left:
        end_leftovers(left)
        return 1
    return 0


if __name__ == "__main__":
    run_script(main)
