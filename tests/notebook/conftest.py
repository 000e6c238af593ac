"""Fixtures of the live-notebook tier: one server per backend for the session, a notebook per test."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest

from tests.browser.lab_server import LabServer

from .servers import start_server, write_notebook


@pytest.fixture(scope="session", params=["collaboration", "documents"])
def live_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LabServer]:
    """A server of each backend (jupyter-collaboration; jupyter-server-documents), each its own tier."""
    server = start_server(request.param, tmp_path_factory.mktemp(f"live-{request.param}"))
    server.backend = request.param  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def notebook_path(live_server: LabServer, request: pytest.FixtureRequest) -> str:
    """A new notebook of two code cells (``x = 1``, ``y = 2``) on the shared server, for one test."""
    name = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:50] + f"-{uuid.uuid4().hex[:6]}.ipynb"
    write_notebook(live_server.root_dir / name, ["x = 1", "y = 2"])
    return name
