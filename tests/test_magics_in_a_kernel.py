"""The ``%%agent`` / ``%%ask`` magics in a real IPython kernel (jupyter_client), on the stand-in CLI.

Each test starts a fresh python3 kernel and sends it cells one by one, as JupyterLab does: the
magic cell is rewritten into one ``await`` (the kernel's loop keeps running), ``{name}`` is filled
from the kernel's namespace, the ``TurnResult`` lands in ``-o VAR`` and ``_``, the conversation goes on
across cells, typed errors are one line, and a kernel interrupt (the notebook's stop button) cancels
the turn in flight within its bound.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client.manager")

from tests.kernel import Kernel  # noqa: E402 (after the skip)

pytestmark = pytest.mark.slow


class MagicsKernel(Kernel):
    def close(self) -> None:
        try:
            self.run("await get_ipython().magics_manager.registry['ElynavMagics'].stop_all()", timeout=60)
        finally:
            self.shutdown()


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[MagicsKernel]:
    started = MagicsKernel()
    try:
        started.run(
            f"""
            %load_ext elynav_nb
            %config ElynavMagics.workspace = {str(tmp_path)!r}
            %config ElynavMagics.executable = "standin"
            """
        )
        yield started
    finally:
        started.close()


def test_an_agent_cell_streams_a_turn_into_its_variable_and_the_conversation_goes_on(
    kernel: MagicsKernel,
) -> None:
    kernel.run('account = "Girard"')
    lines, errors = kernel.run(
        """
        %%agent sdr -o found
        Trouve le compte {account} ({{pas une variable}})
        """
    )
    assert errors == []
    lines, errors = kernel.run("print(type(found).__name__, found.outcome, found.prompt, _ is found)")
    assert errors == [] and lines == [
        "TurnResult completed Trouve le compte Girard ({pas une variable}) True"
    ]
    first_session = kernel.run("print(found.session_id)")[0][0]

    lines, errors = kernel.run("%agent sdr Et maintenant ?")  # the line form: the same conversation
    assert errors == []
    lines, errors = kernel.run("print(_.outcome, _.prompt, _.session_id)")
    assert lines == [f"completed Et maintenant ? {first_session}"]
    lines, _ = kernel.run("%agents")
    lines, errors = kernel.run("frame = %agents\nprint(frame.set_index('agent').loc['elynav-sdr', 'turns'])")
    assert errors == [] and lines == ["2"]


def failed_line(kernel: MagicsKernel, cell: str) -> str:
    """Run a cell that must fail: its error as the frontend shows it, one line ``CODE: message``."""
    lines, errors = kernel.run(cell)
    assert len(errors) == 1, (cell, lines, errors)
    (traceback,) = kernel.tracebacks
    assert len(traceback) == 1, traceback  # one line, no Python traceback
    return traceback[0]


def test_bad_input_fails_the_cell_with_one_typed_line_and_the_kernel_goes_on(kernel: MagicsKernel) -> None:
    shown = failed_line(kernel, "%%agent nobody\nBonjour")
    assert shown.startswith("AGENT_NOT_FOUND: no agent 'nobody'") and "elynav-sdr" in shown  # the choices
    assert failed_line(kernel, "%%agent sdr\nBonjour {undefined_name}").startswith(
        "INVALID_INPUT: {undefined_name}"
    )
    shown = failed_line(kernel, "%%agent sdr --timeout -5\nBonjour")
    assert shown.startswith("INVALID_INPUT:") and "positive" in shown
    assert failed_line(kernel, "%%ask sdr\nBonjour") == (
        "INVALID_INPUT: no running office in this kernel: office = await Office(workspace).start()"
    )
    assert failed_line(kernel, "%office").startswith("INVALID_INPUT: no running office")  # the same way
    shown = failed_line(
        kernel, "%agent sdr"
    )  # the line form needs a message; the cell form does not name one
    assert "required: message" in shown
    assert "required: name, message" not in failed_line(kernel, "%%agent\nBonjour")
    lines, errors = kernel.run("print('still serving')")
    assert lines == ["still serving"]
    # "Run All" stops at a failed magic: the cells sent after it in the same request are not run
    lines, errors = kernel.run("%agent nobody Bonjour\nprint('not reached')")
    assert errors and "not reached" not in lines
    lines, errors = kernel.run("%elynav error")
    assert (
        errors == []
        and lines[:2]
        == [
            lines[0],
            "in: %agent nobody Bonjour",
        ]
        and lines[0].startswith("AGENT_NOT_FOUND: no agent 'nobody'")
    )


def test_a_turn_that_fails_fails_its_cell_and_its_result_is_kept(kernel: MagicsKernel) -> None:
    shown = failed_line(kernel, "%%agent sdr -o broken\n@standin api-error")
    assert shown.startswith(("AGENT_PROCESS_ERROR:", "CLI_EXITED:", "API_ERROR")), shown
    lines, errors = kernel.run("print(broken.outcome, _ is broken)")
    assert errors == [] and lines == ["error True"], lines


def test_the_magics_have_help_from_their_parsers(kernel: MagicsKernel) -> None:
    lines, errors = kernel.run("%agent --help")
    assert (
        errors == []
        and lines[0].startswith("usage: %agent [-h]")
        and any("--schema" in line for line in lines)
    )
    lines, errors = kernel.run("%%agent --help\n")
    assert errors == [] and lines[0].startswith("usage: %%agent [-h]")
    assert not any("message" in line for line in lines[:3])  # the cell form's message is its body
    lines, errors = kernel.run("%elynav help")
    assert errors == [] and {"usage: %%agent [-h]", "usage: %%ask [-h]", "usage: %elynav [-h]"} <= {
        line.split(" [--")[0].split(" {")[0].split(" [-h]")[0] + " [-h]"
        for line in lines
        if line.startswith("usage:")
    }
    lines, errors = kernel.run("frame = %elynav list\nprint(list(frame['cli']), list(frame.columns))")
    assert errors == [] and lines == [
        "['claude', 'codex', 'gemini', 'acp'] ['cli', 'found', 'stand-in', 'modes', 'models']"
    ], lines
    lines, errors = kernel.run("%elynav error")
    assert errors == [] and lines == ["no magic failed in this kernel yet"]


def test_a_kernel_interrupt_cancels_the_turn_of_the_awaiting_cell(kernel: MagicsKernel) -> None:
    message_id = kernel.client.execute("%%agent sdr -o slow\n@standin slow 30\nUne longue réponse")
    time.sleep(4)  # the turn streams (the stand-in writes slowly for 30 s)
    interrupted = time.monotonic()
    kernel.manager.interrupt_kernel()
    while True:  # the interrupted cell's own reply first (cells sent before it would be aborted)
        reply = kernel.client.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == message_id:
            break
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] in ("KeyboardInterrupt", "CancelledError")
    lines, errors = kernel.run(
        """
        import asyncio
        runner = get_ipython().magics_manager.registry['ElynavMagics'].runners[('elynav-sdr', 'claude')]
        for _ in range(100):
            if runner.history:
                break
            await asyncio.sleep(0.1)
        print(runner.history[-1].outcome, runner.busy, runner.is_running)
        """
    )
    assert time.monotonic() - interrupted < 20
    assert errors == [] and lines == ["cancelled False True"]  # the CLI honoured the interrupt and stays


def test_an_ask_cell_goes_through_the_running_office(kernel: MagicsKernel) -> None:
    lines, errors = kernel.run(
        """
        from elynav_nb.office import Office
        office = await Office(get_ipython().magics_manager.registry['ElynavMagics'].workspace,
                              ["elynav-sdr"], executable="standin").start()
        print(office.status)
        """
    )
    assert errors == [], errors
    lines, errors = kernel.run("%%ask sdr -o reply\nBonjour de la part de {office.status}")
    assert errors == [], errors
    lines, errors = kernel.run(
        """
        frame = %elynav_history
        print(type(reply).__name__, reply.outcome, reply.sender, len(frame), frame["outcome"].iloc[-1])
        await office.stop()
        """
    )
    assert errors == [] and lines == ["Reply done user 1 done"], lines


def test_an_agent_cell_with_a_schema_gives_validated_rows(kernel: MagicsKernel) -> None:
    lines, errors = kernel.run(
        """
        from pydantic import BaseModel

        class Lead(BaseModel):
            name: str
            score: int

        Leads = list[Lead]
        not_a_schema = 42
        """
    )
    assert errors == [], errors
    lines, errors = kernel.run(
        '%%agent sdr --schema Leads -o leads\n@standin json {{"result": [{{"name": "Acme", "score": 3}}]}}'
    )  # {{ }}: literal braces in a magic cell
    assert errors == [] and not any(line.startswith("INVALID_INPUT") for line in lines), (lines, errors)
    lines, errors = kernel.run("print(leads.outcome, leads.data, list(leads.to_frame()['name']), _ is leads)")
    assert errors == [] and lines == ["completed [Lead(name='Acme', score=3)] ['Acme'] True"], lines
    shown = failed_line(kernel, "%%agent sdr --schema not_a_schema\nBonjour")
    assert shown.startswith("INVALID_INPUT: output_schema must be"), shown
    shown = failed_line(kernel, "%%agent sdr --schema undefined_thing\nBonjour")
    assert shown.startswith("INVALID_INPUT: --schema takes the name"), shown
