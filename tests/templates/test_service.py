"""Template use cases: CRUD, versions, expected_version, events, and every bad input of the issue."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.errors import InvalidInput, TemplateNotFound, VersionConflict
from elynav_nb.templates.domain import TemplateCreated, TemplateDeleted, TemplateUpdated
from elynav_nb.templates.service import TemplateService
from elynav_nb.templates.store import TemplateStore, default_home

from .helpers import snapshot


def test_create_list_read(service: TemplateService) -> None:
    first = service.create("Code reviewer", "You review code.", "claude-opus")
    second = service.create("Code reviewer", "Another one.")
    assert (first.id, second.id) == ("code-reviewer-1", "code-reviewer-2")
    assert first.version == 1 and first.default_profile_id == "claude-opus"
    assert second.default_profile_id == service.profiles.default_profile_id
    assert service.list_templates() == [first, second]
    assert service.read(first.id) == first
    assert TemplateService.open(service.store.home).read(second.id) == second  # another instance sees it


def test_ids_are_never_reused_after_a_delete(service: TemplateService) -> None:
    first = service.create("Writer", "x")
    service.delete(first.id)
    again = service.create("Writer", "x")
    assert again.id != first.id


def test_update_bumps_the_version_only_for_new_content(service: TemplateService) -> None:
    template = service.create("Writer", "v1")
    renamed = service.update(template.id, name="Senior writer", default_profile_id="claude-haiku")
    assert (renamed.version, renamed.name, renamed.default_profile_id) == (1, "Senior writer", "claude-haiku")
    same = service.update(template.id, content="v1")
    assert same.version == 1
    changed = service.update(template.id, content="v2")
    assert changed.version == 2
    assert service.read(template.id) == changed


def test_update_with_nothing_to_change_is_invalid(service: TemplateService) -> None:
    template = service.create("Writer", "v1")
    with pytest.raises(InvalidInput):
        service.update(template.id)


def test_stale_expected_version_is_a_conflict_and_changes_nothing(
    service: TemplateService, home: Path
) -> None:
    template = service.create("Writer", "v1")
    service.update(template.id, content="v2", expected_version=1)
    before = snapshot(home)
    with pytest.raises(VersionConflict) as caught:
        service.update(template.id, content="v3 from a stale reader", expected_version=1)
    assert caught.value.code == "VERSION_CONFLICT"
    assert caught.value.details == {"templateId": template.id, "expectedVersion": 1, "currentVersion": 2}
    with pytest.raises(VersionConflict):
        service.delete(template.id, expected_version=1)
    assert snapshot(home) == before
    assert service.delete(template.id, expected_version=2).version == 2


def test_events_are_observable(service: TemplateService) -> None:
    events: list[object] = []
    unsubscribe = service.subscribe(events.append)
    template = service.create("Writer", "v1")
    service.update(template.id, content="v2")
    service.update(template.id, name="Renamed")
    service.update(template.id, name="Renamed")  # no change: no event
    service.delete(template.id)
    unsubscribe()
    service.create("Unseen", "x")
    assert events == [
        TemplateCreated(template.id, "Writer", 1),
        TemplateUpdated(template.id, 1, 2, True, ("contentMd",)),
        TemplateUpdated(template.id, 2, 2, False, ("name",)),
        TemplateDeleted(template.id, 2),
    ]


def test_a_failing_listener_does_not_undo_the_change(service: TemplateService) -> None:
    def broken_listener(_event: object) -> None:
        raise RuntimeError("listener bug")

    service.subscribe(broken_listener)
    template = service.create("Writer", "v1")
    assert service.read(template.id).version == 1


def test_delete_removes_the_markdown_file(service: TemplateService, home: Path) -> None:
    template = service.create("Writer", "v1")
    markdown = home / "templates" / "md" / f"{template.id}.md"
    assert markdown.read_text() == "v1"
    service.delete(template.id)
    assert not markdown.exists()
    assert list((home / "templates" / "md").iterdir()) == []
    with pytest.raises(TemplateNotFound):
        service.read(template.id)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "profile"),
    [
        ("", "x", None),  # empty name
        ("  ", "x", None),  # blank name
        ("Writer", "x", "gpt-9000"),  # unknown profile
        ("Writer", "a" * (10 * 1024 * 1024), None),  # 10 MB content (cap: 1 MiB)
        ("Writer", 42, None),  # not text
    ],
)
def test_bad_create_raises_invalid_input_and_writes_nothing(
    service: TemplateService, home: Path, name: str, content: str, profile: str | None
) -> None:
    service.create("Existing", "x")
    before = snapshot(home)
    with pytest.raises(InvalidInput):
        service.create(name, content, profile)
    assert snapshot(home) == before


def test_bad_updates_raise_and_write_nothing(service: TemplateService, home: Path) -> None:
    template = service.create("Writer", "v1")
    before = snapshot(home)
    with pytest.raises(InvalidInput):
        service.update(template.id, name="")
    with pytest.raises(InvalidInput):
        service.update(template.id, default_profile_id="nope")
    with pytest.raises(InvalidInput):
        service.update(template.id, content="a" * (10 * 1024 * 1024))
    with pytest.raises(InvalidInput):
        service.update(template.id, content="x", expected_version=0)
    with pytest.raises(InvalidInput):
        service.update(template.id, content="x", expected_version=True)
    assert snapshot(home) == before


def test_unknown_and_malformed_ids(service: TemplateService) -> None:
    with pytest.raises(TemplateNotFound) as caught:
        service.read("no-such-template-1")
    assert caught.value.code == "TEMPLATE_NOT_FOUND"
    with pytest.raises(TemplateNotFound):
        service.update("no-such-template-1", content="x")
    with pytest.raises(TemplateNotFound):
        service.delete("no-such-template-1")
    with pytest.raises(InvalidInput):
        service.read("../../etc/passwd")


def test_reading_an_empty_home_creates_nothing(home: Path) -> None:
    service = TemplateService.open(home)
    assert service.list_templates() == []
    assert list(home.iterdir()) == []


def test_default_home_follows_elynav_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ELYNAV_HOME", str(tmp_path / "h"))
    assert default_home() == tmp_path / "h"
    assert TemplateStore().home == tmp_path / "h"
    monkeypatch.delenv("ELYNAV_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_home() == tmp_path / "xdg" / "elynav"
