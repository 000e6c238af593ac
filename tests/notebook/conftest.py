"""Fixtures of the live-notebook tier: one jupyter-collaboration server for the session, a notebook per test."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest

from tests.browser.lab_server import LabServer

from .servers import start_server, write_notebook


@pytest.fixture(scope="session")
def collaboration_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    server = start_server("collaboration", tmp_path_factory.mktemp("live-notebooks"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def notebook_path(collaboration_server: LabServer, request: pytest.FixtureRequest) -> str:
    """A new notebook of two code cells (``x = 1``, ``y = 2``) on the shared server, for one test."""
    name = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:50] + f"-{uuid.uuid4().hex[:6]}.ipynb"
    write_notebook(collaboration_server.root_dir / name, ["x = 1", "y = 2"])
    return name
