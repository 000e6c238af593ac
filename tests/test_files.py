"""The one atomic-write helper (``elynav_nb._files``) and the writers that go through it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from elynav_nb import _files
from elynav_nb._files import NEW_FILE_MODE, write_atomically


def _permission_bits(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def folders_fsynced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders ``write_atomically`` fsyncs after its rename, in order."""
    fsynced: list[Path] = []
    real_fsync_folder = _files.fsync_folder

    def recording_fsync_folder(folder: Path) -> None:
        fsynced.append(folder)
        real_fsync_folder(folder)

    monkeypatch.setattr(_files, "fsync_folder", recording_fsync_folder)
    return fsynced


# -- the helper ---------------------------------------------------------------------------------------


def test_bytes_are_written_as_given_and_the_folder_is_fsynced(
    tmp_path: Path, folders_fsynced: list[Path]
) -> None:
    target = tmp_path / "data.bin"
    write_atomically(target, b"\x00\xffbytes\r\n")
    assert target.read_bytes() == b"\x00\xffbytes\r\n"
    assert folders_fsynced == [tmp_path]
    assert os.listdir(tmp_path) == ["data.bin"]


def test_text_is_written_as_utf8_without_newline_translation(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    write_atomically(str(target), "é\r\nline\n")
    assert target.read_bytes() == "é\r\nline\n".encode()


def test_a_missing_folder_is_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.json"
    write_atomically(target, "{}")
    assert target.read_text() == "{}"


def test_a_new_file_gets_0o644_whatever_the_umask(tmp_path: Path) -> None:
    previous_umask = os.umask(0o077)
    try:
        write_atomically(tmp_path / "new.txt", "x")
    finally:
        os.umask(previous_umask)
    assert _permission_bits(tmp_path / "new.txt") == NEW_FILE_MODE == 0o644


def test_without_a_mode_the_old_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "private.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_atomically(target, "new")
    assert target.read_text() == "new"
    assert _permission_bits(target) == 0o600


def test_a_given_mode_is_set_even_over_an_old_file(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_atomically(target, "new", mode=0o640)
    assert _permission_bits(target) == 0o640


def test_a_failed_rename_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "kept.txt"
    target.write_text("old")

    def failing_replace(source: object, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["kept.txt"]


def test_an_interrupt_during_fsync_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted_fsync(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(tmp_path / "never.txt", "data")
    assert os.listdir(tmp_path) == []


def test_text_that_cannot_be_encoded_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(UnicodeEncodeError):
        write_atomically(tmp_path / "never.txt", "lone \udc80 surrogate")
    assert os.listdir(tmp_path) == []


# -- the writers that go through it: same bytes and modes as before, now with the folder fsynced ----------


def test_installed_agent_files_are_0o644_and_durable(tmp_path: Path, folders_fsynced: list[Path]) -> None:
    from elynav_nb.agents.definitions import install_agents

    agents_folder = tmp_path / ".claude" / "agents"
    agents_folder.mkdir(parents=True)
    (agents_folder / "elynav-sdr.md").write_text("old")
    (agents_folder / "elynav-sdr.md").chmod(0o600)
    (path,) = install_agents(tmp_path, ["elynav-sdr"])
    assert _permission_bits(path) == 0o644
    assert folders_fsynced == [agents_folder]
    assert os.listdir(agents_folder) == ["elynav-sdr.md"]


def test_mcp_config_is_0o600_utf8_and_durable(tmp_path: Path, folders_fsynced: list[Path]) -> None:
    from elynav_nb.crm.workspace import write_mcp_config

    extra = {"café": {"command": "serve-é"}}
    path = write_mcp_config(tmp_path, extra_servers=extra, python_executable="/usr/bin/python3")
    assert _permission_bits(path) == 0o600
    assert path.read_bytes().endswith(b'"serve-\xc3\xa9"\n    }\n  }\n}\n')
    assert folders_fsynced == [tmp_path.resolve()]
    assert os.listdir(tmp_path) == [".mcp.json"]


def test_office_sessions_are_0o600_and_durable(tmp_path: Path, folders_fsynced: list[Path]) -> None:
    from elynav_nb.office.workspace import OfficeFiles

    files = OfficeFiles(tmp_path)
    files.save_sessions({"b": "session-2", "a": "session-1"})
    assert files.sessions_path.read_text() == '{\n  "a": "session-1",\n  "b": "session-2"\n}'
    assert _permission_bits(files.sessions_path) == 0o600
    assert folders_fsynced == [files.folder]
    assert files.load_sessions() == {"a": "session-1", "b": "session-2"}
    assert os.listdir(files.folder) == ["sessions.json"]


def test_template_store_writes_are_durable(tmp_path: Path, folders_fsynced: list[Path]) -> None:
    from elynav_nb.templates.service import TemplateService

    service = TemplateService.open(tmp_path / "home")
    template = service.create("Reviewer", "You review.\n")
    assert (tmp_path / "home" / "templates" / "md" / f"{template.id}.md").read_text() == "You review.\n"
    assert tmp_path / "home" / "templates" in folders_fsynced
