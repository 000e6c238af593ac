"""The on-disk store: format, corruption never overwritten, non-UTF-8 files, hand-edited index."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from elynav_nb.errors import TemplateStoreCorrupt
from elynav_nb.templates.domain import content_hash
from elynav_nb.templates.service import TemplateService

from .helpers import snapshot


def _index(home: Path) -> dict[str, object]:
    return json.loads((home / "templates" / "index.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _write_index(home: Path, document: object) -> None:
    (home / "templates" / "index.json").write_text(json.dumps(document), encoding="utf-8")


def test_layout_and_index_fields(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "Relis le code.\n", "claude-opus")
    assert (home / "templates" / "md" / f"{template.id}.md").read_bytes() == b"Relis le code.\n"
    assert _index(home) == {
        "formatVersion": 1,
        "nextNumber": 2,
        "templates": [
            {
                "id": template.id,
                "name": "Reviewer",
                "version": 1,
                "contentHash": content_hash("Relis le code.\n"),
                "defaultProfileId": "claude-opus",
            }
        ],
    }
    leftovers = [
        path.name for path in (home / "templates").rglob("*") if path.name.endswith((".tmp", ".next"))
    ]
    assert leftovers == []


def _assert_every_operation_refuses_and_writes_nothing(
    service: TemplateService, home: Path, template_id: str, *, index_is_corrupt: bool = True
) -> None:
    before = snapshot(home)
    operations = [
        lambda: service.list_templates(),
        lambda: service.read(template_id),
        lambda: service.update(template_id, content="overwrite"),
        lambda: service.update(template_id, name="rename"),
        lambda: service.delete(template_id),
    ]
    if index_is_corrupt:  # a corrupt content file blocks its template only; a corrupt index blocks all
        operations.append(lambda: service.create("New", "x"))
    for operation in operations:
        with pytest.raises(TemplateStoreCorrupt) as caught:
            operation()
        assert caught.value.code == "TEMPLATE_STORE_CORRUPT"
    assert snapshot(home) == before


@pytest.mark.parametrize(
    "bad_index",
    [
        b"{not json",
        b"\xff\xfe garbage",
        b"[]",
        b'{"formatVersion": 2, "templates": []}',
        b'{"formatVersion": 1, "templates": {}}',
    ],
)
def test_a_corrupt_index_is_a_clear_error_and_is_never_overwritten(
    service: TemplateService, home: Path, bad_index: bytes
) -> None:
    template = service.create("Reviewer", "v1")
    (home / "templates" / "index.json").write_bytes(bad_index)
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id)


def test_hand_edited_index_entries_that_break_the_rules(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    good = _index(home)
    entry = good["templates"][0]  # type: ignore[index]
    broken_variants = [
        {**entry, "version": 0},
        {**entry, "name": ""},
        {**entry, "id": "../escape"},
        {**entry, "contentHash": "md5:abc"},
        {key: value for key, value in entry.items() if key != "defaultProfileId"},
    ]
    for broken_entry in broken_variants:
        _write_index(home, {**good, "templates": [broken_entry]})
        _assert_every_operation_refuses_and_writes_nothing(service, home, template.id)
    _write_index(home, {**good, "templates": [entry, entry]})  # a duplicated id
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id)


def test_a_hand_edit_that_keeps_the_index_consistent_is_accepted(
    service: TemplateService, home: Path
) -> None:
    template = service.create("Reviewer", "v1")
    document = _index(home)
    document["templates"][0]["name"] = "Renamed by hand"  # type: ignore[index]
    _write_index(home, document)
    assert service.read(template.id).name == "Renamed by hand"
    assert service.update(template.id, content="v2").version == 2


def test_a_content_file_edited_behind_the_index_is_corrupt(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    other = service.create("Other", "fine")
    (home / "templates" / "md" / f"{template.id}.md").write_text("edited by hand")
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id, index_is_corrupt=False)
    assert service.read(other.id).content_md == "fine"  # the other templates stay usable
    assert service.update(other.id, content="still fine").version == 2
    assert (home / "templates" / "md" / f"{template.id}.md").read_text() == "edited by hand"


def test_a_missing_content_file_is_corrupt(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    (home / "templates" / "md" / f"{template.id}.md").unlink()
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id, index_is_corrupt=False)


def test_a_non_utf8_content_file_is_corrupt_even_when_its_hash_matches(
    service: TemplateService, home: Path
) -> None:
    template = service.create("Reviewer", "v1")
    latin1 = "Résumé".encode("latin-1")
    (home / "templates" / "md" / f"{template.id}.md").write_bytes(latin1)
    document = _index(home)
    document["templates"][0]["contentHash"] = "sha256:" + hashlib.sha256(latin1).hexdigest()  # type: ignore[index]
    _write_index(home, document)
    with pytest.raises(TemplateStoreCorrupt) as caught:
        service.read(template.id)
    assert "not UTF-8" in caught.value.message
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id, index_is_corrupt=False)


def test_a_deleted_index_with_template_files_left_is_corrupt(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    (home / "templates" / "index.json").unlink()
    _assert_every_operation_refuses_and_writes_nothing(service, home, template.id)


def test_a_new_id_never_lands_on_a_file_outside_the_index(service: TemplateService, home: Path) -> None:
    md_folder = home / "templates" / "md"
    md_folder.mkdir(parents=True)
    (md_folder / "reviewer-1.md").write_text("someone's file")
    (home / "templates" / "index.json").write_text('{"formatVersion": 1, "templates": []}')
    created = service.create("Reviewer", "v1")
    assert created.id == "reviewer-2"
    assert (md_folder / "reviewer-1.md").read_text() == "someone's file"


def test_unknown_files_in_the_md_folder_are_left_alone(service: TemplateService, home: Path) -> None:
    stray = home / "templates" / "md"
    service.create("Reviewer", "v1")
    (stray / "notes.md").write_text("mine")
    template = service.create("Other", "x")
    service.delete(template.id)
    assert (stray / "notes.md").read_text() == "mine"


def test_the_index_decode_is_cached_but_never_stale(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    reader = TemplateService.open(home)
    assert reader.read(template.id).version == 1
    service.update(template.id, content="v2")
    assert reader.read(template.id).version == 2  # other instance, same process: new bytes, new decode
