"""Running cells of a live notebook in its real kernel: outputs once, the count set, the trap, faults."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import textwrap

import pytest
from pycrdt import Map

from elynav_nb.errors import KernelDied, OperationTimeout, RunRefused
from elynav_nb.notebook import LiveNotebook, cells
from elynav_nb.notebook.kernel import KernelClient
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, wait_until

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


def open_live(server, path, **options):
    return LiveNotebook.open(path, server_url=server.base_url, token=server.token, **options)


async def test_a_run_writes_its_outputs_once_with_the_count(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        cell_id = await nb.insert_cell("print('hello')\n6 * 7")
        first = await nb.run_cell(cell_id)
        assert first.status == "ok" and not first.subshell
        second = await nb.run_cell(cell_id)  # a re-run replaces, never appends
        assert second.execution_count == first.execution_count + 1
        cell = nb.cell(cell_id)
        assert cell.execution_count == second.execution_count
        assert [output["output_type"] for output in cell.outputs] == ["stream", "execute_result"]
        assert nb.outputs_text(cell_id) == "hello\n\n42"
        async with RawPeer.join(live_server, notebook_path) as peer:
            seen = [cell for cell in peer.cells if cell["id"] == cell_id][0]
            assert len(seen["outputs"]) == 2 and seen["execution_count"] == second.execution_count

        def saved_cell() -> dict:
            cells = json.loads((live_server.root_dir / notebook_path).read_text())["cells"]
            return next((cell for cell in cells if cell["id"] == cell_id), {})

        await wait_until(
            lambda: saved_cell().get("execution_count") == second.execution_count, 15, "the save"
        )
        assert len(saved_cell()["outputs"]) == 2
        import nbformat

        nbformat.validate(nbformat.reads((live_server.root_dir / notebook_path).read_text(), as_version=4))


async def test_an_error_and_a_huge_output_are_written_bounded(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        failing = await nb.insert_cell("1 / 0")
        result = await nb.run_cell(failing)
        assert result.status == "error" and result.error_name == "ZeroDivisionError"
        assert nb.outputs_text(failing).startswith("ZeroDivisionError: division by zero")
        huge = await nb.insert_cell("print('x' * 900_000)")
        await nb.run_cell(huge, max_output_bytes=100_000)
        text = nb.cell(huge).outputs[0]["text"]
        assert len(text.encode()) < 100_000 and "cut by elynav (output too large)" in text
        assert len(
            nb.outputs_text(huge, max_chars=500)
        ) < 600 and "more characters not shown" in nb.outputs_text(huge, 500)


async def ask_from_inside(nb, kernel_id: str, asking_cell: str) -> str:
    """Run ``asking_cell`` in the notebook's kernel as a person's cell would (it holds the main shell);
    what it printed, once it ended ``ok``."""
    outside = KernelClient(nb.api, kernel_id)
    try:
        asked = await outside.run(textwrap.dedent(asking_cell), timeout=60)
    finally:
        await outside.close()
    assert asked.status == "ok", "\n".join(asked.outputs[-1].get("traceback", []))
    return "".join(output.get("text", "") for output in asked.outputs if output["output_type"] == "stream")


async def test_a_cell_runs_from_inside_the_kernel_whose_cell_awaits_it(live_server, notebook_path):
    """The trap: the asking cell holds the main shell; the run goes through an ipykernel 7 subshell."""
    async with open_live(live_server, notebook_path) as nb:
        target = nb.cells[1].id
        kernel_id = await nb.api.start_kernel_for(notebook_path)
        printed = await ask_from_inside(
            nb,
            kernel_id,
            f"""
            from elynav_nb.notebook import LiveNotebook
            inner = await LiveNotebook.current(user_name="Kernel agent")
            result = await inner.run_cell({target!r}, timeout=30)
            print(inner.path, result.subshell, result.status, inner.cell({target!r}).execution_count)
            await inner.close()
            """,
        )
        path, subshell, status, count = printed.split()
        assert path == notebook_path and subshell == "True" and status == "ok" and count != "None"
        await wait_until(
            lambda: nb.cell(target).execution_count is not None, what="the run's count at the agent"
        )


async def test_a_subshell_run_past_its_timeout_leaves_the_asking_cell_running(live_server, notebook_path):
    """From inside the kernel the run takes a subshell, which an interrupt cannot reach: at its timeout
    the asking cell (on the main shell) must not be the one interrupted, and a next run is not queued
    behind the cell still sleeping."""
    async with open_live(live_server, notebook_path) as nb:
        kernel_id = await nb.api.start_kernel_for(notebook_path)
        printed = await ask_from_inside(
            nb,
            kernel_id,
            """
            import asyncio
            from elynav_nb.errors import OperationTimeout
            from elynav_nb.notebook import LiveNotebook
            inner = await LiveNotebook.current(user_name="Kernel agent")
            slow = await inner.insert_cell("import time\\ntime.sleep(20)")
            try:
                await inner.run_cell(slow, timeout=2)
            except OperationTimeout as error:
                print(error.code, "cannot interrupt" in str(error))
            await asyncio.sleep(1)  # an interrupt sent at the timeout would have landed here
            quick = await inner.insert_cell("'next'")
            result = await inner.run_cell(quick, timeout=10)
            print(result.subshell, result.status, inner.outputs_text(quick))
            await inner.close()
            """,
        )
        assert printed.split() == ["TIMEOUT", "True", "True", "ok", "'next'"]


async def test_a_busy_kernel_without_subshells_is_refused_at_once(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        kernel_id = await nb.api.start_kernel_for(notebook_path)
        runner = KernelClient(nb.api, kernel_id, own_kernel=True)
        runner._supports_subshells = False  # as a kernel before ipykernel 7 answers kernel_info
        try:
            with pytest.raises(RunRefused) as refused:
                await runner.run("1 + 1", timeout=30)
            assert "wait for ever" in str(refused.value)
        finally:
            await runner.close()


async def test_a_kernel_that_dies_during_a_run_is_typed_and_the_cell_shows_what_came(
    live_server, notebook_path
):
    async with open_live(live_server, notebook_path) as nb:
        cell_id = await nb.insert_cell("print('before')")
        await nb.run_cell(cell_id)
        await nb.update_cell(
            cell_id, "import os, time\nprint('partial', flush=True)\ntime.sleep(0.5)\nos._exit(1)"
        )
        with pytest.raises(KernelDied):
            await nb.run_cell(cell_id, timeout=60)
        # as JupyterLab shows it: the old outputs cleared when the run began, what came before the death
        # once, no count, the cell no longer running
        assert nb.outputs_text(cell_id) == "partial" and nb.cell(cell_id).execution_count is None
        async with RawPeer.join(live_server, notebook_path) as peer:
            seen = peer.cell(cell_id).to_py()
            assert [output.get("text") for output in seen["outputs"]] == ["partial\n"]
            assert seen.get("execution_state") == "idle" and seen.get("execution_count") is None


async def test_a_persons_view_shows_the_run_as_it_goes(live_server, notebook_path):
    """A peer sees the cell running ([*]), its outputs before the run ends, each once, then the count."""
    async with open_live(live_server, notebook_path) as nb, RawPeer.join(live_server, notebook_path) as peer:
        cell_id = await nb.insert_cell(
            "import time\nfor step in range(3):\n    print(step, flush=True)\n    time.sleep(0.4)\n'done'"
        )
        await nb.run_cell(await nb.insert_cell("1"))  # the kernel started: the next run is timed alone
        views: list[tuple[str, str, int | None]] = []

        def look() -> None:
            cell = peer.cell(cell_id).to_py()
            text = "".join(str(output.get("text", "")) for output in cell["outputs"])
            view = (str(cell.get("execution_state")), text, cell.get("execution_count"))
            if not views or views[-1] != view:
                views.append(view)

        peer.notebook.ydoc.observe(lambda _event: asyncio.get_running_loop().call_soon(look))
        result = await nb.run_cell(cell_id)
        await wait_until(lambda: views and views[-1][0] == "idle", what="the run's last write at the peer")
        running = [view for view in views if view[0] == "running"]
        texts = [text for _, text, _ in running]  # each a step further, none twice (a peer's look may
        assert texts == sorted(set(texts), key=len)  # take two writes at once: some steps may merge)
        assert set(texts) <= {"", "0\n", "0\n1\n", "0\n1\n2\n"} and {"0\n", "0\n1\n"} & set(texts)
        assert all(count is None for _, _, count in running)
        assert views[-1] == ("idle", "0\n1\n2\n", result.execution_count)
        assert nb.outputs_text(cell_id) == "0\n1\n2\n\n'done'"


async def test_a_run_past_its_timeout_interrupts_the_kernel(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        cell_id = await nb.insert_cell("import time\ntime.sleep(60)")
        with pytest.raises(OperationTimeout):
            await nb.run_cell(cell_id, timeout=2)
        quick = await nb.insert_cell("'still alive'")
        result = await nb.run_cell(quick, timeout=30)
        assert nb.outputs_text(quick) == "'still alive'" and result.status == "ok"


async def test_runs_from_outside_keep_to_subshells_while_a_persons_cell_runs(live_server, notebook_path):
    """The server's state says ``idle`` after our first subshell run although the person's cell still runs
    on the main shell: the next runs must still take a subshell (they used to queue behind that cell)."""
    async with (
        open_live(live_server, notebook_path) as person,
        open_live(live_server, notebook_path) as agent,
    ):
        await person.run_cell(await person.insert_cell("1"))
        slow = await person.insert_cell("import time\ntime.sleep(20)\n'slept'")
        persons_run = asyncio.get_running_loop().create_task(person.run_cell(slow, timeout=60))
        await wait_until(
            lambda: person.kernel is not None and person.kernel.connected, what="the person's run"
        )
        await asyncio.sleep(1.0)  # its busy reached the server
        for number in range(3):
            cell_id = await agent.insert_cell(f"print({number})")
            result = await agent.run_cell(cell_id, timeout=15)
            assert result.subshell and agent.outputs_text(cell_id) == str(number)
        assert not persons_run.done()  # the agent's runs did not wait for it
        finished = await persons_run
        assert finished.status == "ok" and person.outputs_text(slow) == "'slept'"


async def test_a_run_left_running_by_a_killed_kernel_is_ended_by_the_next_client(live_server, notebook_path):
    """The kernel the agent runs in is killed while the agent shows a run (a person's restart that found it
    stuck, the machine out of memory): only the agent could end the cell's [*], and it is gone. The next
    client that opens the notebook (here from outside) ends it: idle, with the outputs that came and no
    count, as JupyterLab leaves a run that failed."""
    async with RawPeer.join(live_server, notebook_path) as peer:

        def shown() -> tuple[str, list[str]]:
            with contextlib.suppress(KeyError):  # the peer may not have the new cell yet
                cell = peer.cell(target).to_py()
                return str(cell.get("execution_state")), [
                    str(output.get("text")) for output in cell["outputs"]
                ]
            return "", []

        async with open_live(live_server, notebook_path) as nb:
            target = await nb.insert_cell("import time\nprint('step', flush=True)\ntime.sleep(60)")
            outside = KernelClient(nb.api, await nb.api.start_kernel_for(notebook_path))
            pid = int((await outside.run("import os; print(os.getpid())", timeout=30)).outputs[0]["text"])
            asking = f"""
                from elynav_nb.notebook import LiveNotebook
                inner = await LiveNotebook.current(user_name="Kernel agent")
                await inner.run_cell({target!r}, timeout=120)
                """
            run = asyncio.get_running_loop().create_task(outside.run(textwrap.dedent(asking), timeout=120))
            try:
                await wait_until(
                    lambda: shown() == ("running", ["step\n"]), 60, "the agent's run at the peer"
                )
                os.kill(pid, signal.SIGKILL)
                with pytest.raises(KernelDied):
                    await run
            finally:
                run.cancel()
                await outside.close()
            await asyncio.sleep(1.0)
            assert shown() == ("running", ["step\n"])  # no one left to end it
        async with open_live(live_server, notebook_path) as later:
            assert later.cell(target).outputs == [
                {"output_type": "stream", "name": "stdout", "text": "step\n"}
            ]
        await wait_until(lambda: shown() == ("idle", ["step\n"]), what="the [*] ended at the peer")
        assert peer.cell(target).to_py().get("execution_count") is None
        assert not peer.notebook.ydoc.get(cells.RUNS_ROOT, type=Map).to_py()  # the mark went with it
