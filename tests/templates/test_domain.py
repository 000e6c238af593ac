"""The pure template domain: invariants, profiles, hashes, slugs."""

from __future__ import annotations

import pytest

from elynav_nb.errors import InvalidInput
from elynav_nb.templates.domain import (
    MAX_CONTENT_BYTES,
    AgentTemplate,
    ProfileRegistry,
    changed_field_names,
    content_hash,
    slug_for_name,
    validate_agent_name,
    validate_template_id,
)


def test_new_template_starts_at_version_1() -> None:
    template = AgentTemplate.new("reviewer-1", "Reviewer", "You review.", "claude-sonnet")
    assert template.version == 1


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_empty_name_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        AgentTemplate.new("reviewer-1", name, "x", "claude-sonnet")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details["field"] == "name"


def test_name_on_two_lines_and_too_long_are_refused() -> None:
    with pytest.raises(InvalidInput):
        AgentTemplate.new("reviewer-1", "a\nb", "x", "claude-sonnet")
    with pytest.raises(InvalidInput):
        AgentTemplate.new("reviewer-1", "n" * 201, "x", "claude-sonnet")


def test_name_is_trimmed() -> None:
    assert AgentTemplate.new("reviewer-1", "  Reviewer ", "x", "claude-sonnet").name == "Reviewer"


@pytest.mark.parametrize("version", [0, -1, True, 1.5])
def test_version_below_one_or_not_an_int_is_refused(version: object) -> None:
    with pytest.raises(InvalidInput):
        AgentTemplate("reviewer-1", "Reviewer", "x", version, "claude-sonnet")  # type: ignore[arg-type]


def test_content_over_the_cap_is_refused_and_at_the_cap_is_accepted() -> None:
    AgentTemplate.new("big-1", "Big", "a" * MAX_CONTENT_BYTES, "claude-sonnet")
    with pytest.raises(InvalidInput) as caught:
        AgentTemplate.new("big-1", "Big", "a" * (10 * 1024 * 1024), "claude-sonnet")
    assert caught.value.details["limit"] == MAX_CONTENT_BYTES
    # the cap counts UTF-8 bytes, not characters
    with pytest.raises(InvalidInput):
        AgentTemplate.new("big-1", "Big", "é" * (MAX_CONTENT_BYTES // 2 + 1), "claude-sonnet")


def test_lone_surrogate_content_is_refused() -> None:
    with pytest.raises(InvalidInput):
        AgentTemplate.new("bad-1", "Bad", "\ud800", "claude-sonnet")


def test_a_lone_surrogate_in_a_name_is_a_typed_refusal_not_a_unicode_error(tmp_path) -> None:
    """Issue 28 item 7: the name reached the store and failed there with UnicodeEncodeError."""
    from elynav_nb.templates.service import TemplateService

    service = TemplateService.open(tmp_path / "home")
    with pytest.raises(InvalidInput, match="lone surrogate"):
        service.create(name="bad \ud800 name", content="x")
    assert service.list_templates() == []


def test_version_moves_by_one_only_when_the_content_changes() -> None:
    template = AgentTemplate.new("reviewer-1", "Reviewer", "v1", "claude-sonnet")
    same_content = template.with_changes(content_md="v1")
    assert same_content.version == 1
    renamed = template.with_changes(name="Senior reviewer", default_profile_id="claude-opus")
    assert renamed.version == 1
    assert renamed.name == "Senior reviewer"
    changed = template.with_changes(content_md="v2")
    assert changed.version == 2
    changed_again = changed.with_changes(content_md="v3", name="Other")
    assert changed_again.version == 3
    assert changed_field_names(template, changed_again) == ("name", "contentMd")


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert content_hash("é") != content_hash("e")


def test_profile_registry_knows_its_profiles_and_refuses_unknown_ones() -> None:
    registry = ProfileRegistry()
    assert registry.default_profile_id == "claude-sonnet"
    assert registry.get("claude-opus").model == "opus"
    assert "codex-default" in registry
    with pytest.raises(InvalidInput) as caught:
        registry.get("gpt-9000")
    assert "claude-sonnet" in caught.value.message  # the message lists the known profiles


@pytest.mark.parametrize("bad_id", ["", "../etc/passwd", "UPPER", "a/b", "-lead", "x" * 81, 3])
def test_template_ids_must_be_file_safe(bad_id: object) -> None:
    with pytest.raises(InvalidInput):
        validate_template_id(bad_id)


@pytest.mark.parametrize("bad_name", ["", "-agent", "a b", "../x", "a" * 65, None])
def test_agent_names_must_be_file_safe(bad_name: object) -> None:
    with pytest.raises(InvalidInput):
        validate_agent_name(bad_name)


def test_slug_for_name() -> None:
    assert slug_for_name("Code reviewer!") == "code-reviewer"
    assert slug_for_name("¡¿") == "template"
    assert validate_template_id(slug_for_name("x" * 200) + "-12")
