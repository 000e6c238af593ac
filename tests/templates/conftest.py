"""Fixtures for the template tests: a fresh store home, a service on it, a workspace folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.templates.service import TemplateService


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "elynav-home"
    folder.mkdir()
    monkeypatch.setenv("ELYNAV_HOME", str(folder))
    return folder


@pytest.fixture
def service(home: Path) -> TemplateService:
    return TemplateService.open(home)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder
