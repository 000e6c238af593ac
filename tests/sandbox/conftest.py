"""Fixtures for the stand-in tests: an isolated home and a factory that kills every process it starts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.standin_driver import StandinProcess


@pytest.fixture
def home(tmp_path: Path) -> Path:
    directory = tmp_path / "home"
    directory.mkdir()
    return directory


@pytest.fixture
def standin(home: Path) -> Iterator[Callable[..., StandinProcess]]:
    started: list[StandinProcess] = []

    def start(arguments: list[str], **options: Any) -> StandinProcess:
        options.setdefault("home", home)
        process = StandinProcess(arguments, **options)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
