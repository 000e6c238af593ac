"""The curated surface of ``elynav_nb.crm`` (names load lazily; each must resolve)."""

from __future__ import annotations

import subprocess
import sys

import elynav_nb.crm as crm_package


def test_every_exported_name_resolves() -> None:
    assert crm_package.__all__ == sorted(crm_package.__all__)
    for name in crm_package.__all__:
        assert getattr(crm_package, name) is not None, name
    assert "Crm" in dir(crm_package)


def test_the_server_module_does_not_import_pandas() -> None:
    code = "import sys, elynav_nb.crm.server; print('pandas' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
