"""The read/write policy: classification of every catalogued tool, defaults, grants, refusal before effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.errors import InvalidInput, NotAllowed
from elynav_nb.templates.catalogue import CATALOGUE, TOOL_NAMES, dispatch
from elynav_nb.templates.policy import (
    READ_ONLY_TOOLS,
    WRITE_ACTION_TOOLS,
    AgentPolicy,
    PolicyBook,
    policy_book_from_mapping,
)
from elynav_nb.templates.service import TemplateService

from .helpers import snapshot


def test_every_catalogued_tool_is_in_exactly_one_access_set() -> None:
    for tool_name in TOOL_NAMES:
        in_read = tool_name in READ_ONLY_TOOLS
        in_write = tool_name in WRITE_ACTION_TOOLS
        assert in_read != in_write, (
            f"{tool_name} must be in exactly one of READ_ONLY_TOOLS / WRITE_ACTION_TOOLS"
        )
    assert READ_ONLY_TOOLS | WRITE_ACTION_TOOLS == set(TOOL_NAMES)  # no classified tool outside the catalogue
    assert len(TOOL_NAMES) == len(set(TOOL_NAMES)) == 5


def test_catalogue_annotations_follow_the_classification() -> None:
    for spec in CATALOGUE:
        assert spec.read_only == (spec.name in READ_ONLY_TOOLS)
        if spec.read_only:
            assert not spec.destructive
    destructive = {spec.name for spec in CATALOGUE if spec.destructive}
    assert destructive == {"idea_template_update", "idea_template_delete"}


def test_seed_tool_names_and_classification() -> None:
    assert READ_ONLY_TOOLS == {"idea_template_list", "idea_template_read"}
    assert WRITE_ACTION_TOOLS == {"idea_template_create", "idea_template_update", "idea_template_delete"}


def test_an_agent_without_grants_reads_and_does_not_write() -> None:
    policy = PolicyBook().for_agent("sdr")
    assert policy.allowed_tools(TOOL_NAMES) == ["idea_template_list", "idea_template_read"]
    for tool_name in WRITE_ACTION_TOOLS:
        with pytest.raises(NotAllowed) as caught:
            policy.check(tool_name)
        assert caught.value.code == "NOT_ALLOWED"


def test_granting_update_grants_neither_create_nor_delete() -> None:
    policy = PolicyBook({"editor": ["idea_template_update"]}).for_agent("editor")
    assert policy.allows("idea_template_update")
    assert not policy.allows("idea_template_create")
    assert not policy.allows("idea_template_delete")
    assert (
        PolicyBook({"editor": ["idea_template_update"]}).for_agent("someone-else").granted_write_tools
        == set()
    )


def test_grants_name_write_tools_only() -> None:
    with pytest.raises(InvalidInput):
        PolicyBook({"x": ["idea_template_read"]})
    with pytest.raises(InvalidInput):
        PolicyBook({"x": ["idea_template_*"]})
    with pytest.raises(InvalidInput):
        PolicyBook().with_grants("x", ["rm -rf"])


def test_an_unknown_tool_is_invalid_input_not_a_silent_allow() -> None:
    with pytest.raises(InvalidInput):
        AgentPolicy("x").check("idea_template_purge")


def test_policy_file_mapping() -> None:
    book = policy_book_from_mapping({"agents": {"cmo": {"grant": ["idea_template_create"]}}})
    assert book.for_agent("cmo").allows("idea_template_create")
    with pytest.raises(InvalidInput):
        policy_book_from_mapping({"agents": {"cmo": {"grant": "idea_template_create"}}})
    with pytest.raises(InvalidInput):
        policy_book_from_mapping([])


def test_policy_file_round_trip(service: TemplateService, home: Path) -> None:
    assert service.store.load_policy_book().to_dict() == {}
    service.store.save_policy_book(PolicyBook({"cmo": ["idea_template_update", "idea_template_create"]}))
    saved = json.loads((home / "templates" / "policy.json").read_text())
    assert saved == {"agents": {"cmo": {"grant": ["idea_template_create", "idea_template_update"]}}}
    assert service.store.load_policy_book().for_agent("cmo").allows("idea_template_update")
    (home / "templates" / "policy.json").write_bytes(b"{not json")
    with pytest.raises(InvalidInput):
        service.store.load_policy_book()


@pytest.mark.parametrize(
    ("tool_name", "arguments"),
    [
        ("idea_template_create", {"name": "New", "content": "x"}),
        ("idea_template_update", {"templateId": "reviewer-1", "content": "changed"}),
        ("idea_template_delete", {"templateId": "reviewer-1"}),
        ("idea_template_delete", {"templateId": "no-such-id"}),  # refused before the lookup, too
        ("idea_template_create", {"bogus": True}),  # refused before argument checks
    ],
)
def test_a_refused_write_changes_nothing_on_disk(
    service: TemplateService, home: Path, tool_name: str, arguments: dict[str, object]
) -> None:
    service.create("Reviewer", "You review code.")
    events: list[object] = []
    service.subscribe(events.append)
    before = snapshot(home)
    policy = PolicyBook({"editor": ["idea_template_update"]}).for_agent("reader")
    with pytest.raises(NotAllowed):
        dispatch(service, policy, tool_name, arguments)
    assert snapshot(home) == before
    assert events == []


def test_a_granted_write_is_the_only_write_that_goes_through(service: TemplateService, home: Path) -> None:
    template = service.create("Reviewer", "v1")
    policy = PolicyBook({"editor": ["idea_template_update"]}).for_agent("editor")
    result = dispatch(service, policy, "idea_template_update", {"templateId": template.id, "content": "v2"})
    assert result["version"] == 2
    before = snapshot(home)
    with pytest.raises(NotAllowed):
        dispatch(service, policy, "idea_template_delete", {"templateId": template.id})
    with pytest.raises(NotAllowed):
        dispatch(service, policy, "idea_template_create", {"name": "Other", "content": "x"})
    assert snapshot(home) == before
