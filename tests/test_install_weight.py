"""What the README's install-weight decision rests on (issue 32, item 15): one install, paid in disk only.

The README keeps pandas, pyarrow, numpy and IPython (through ipywidgets) in the base install and says
why; what makes that acceptable for a runner-only script or server is that it does not pay for them at
run time. Here a script runs an agent turn on the stand-in: none of them is imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("pandas", "pyarrow", "numpy", "IPython", "ipywidgets", "jedi")

SCRIPT = f"""
import sys
from elynav_nb.agents import AgentRunner

runner = AgentRunner("elynav-sdr", ".", executable="standin")
result = runner.send_sync("Bonjour")
runner.stop_sync()
print(result.outcome, [name for name in {HEAVY!r} if name in sys.modules])
"""


def test_a_script_running_agent_turns_imports_no_frame_or_notebook_library(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert completed.stdout.strip() == "completed []", completed.stdout + completed.stderr


def test_the_readme_says_why_the_base_install_keeps_them() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Install weight.**", 1)[1].split("\n\n", 1)[0]
    assert "pyarrow" in section and "pandas" in section and "IPython" in section
    assert "tests/test_install_weight.py" in section
