"""Agent templates as plain values: the template, its invariants, the profile registry, the events.

Where it sits: the pure core of ``elynav_nb.templates``. The store turns index entries and
markdown files into ``AgentTemplate`` values; the service changes them only through
``AgentTemplate.new`` and ``AgentTemplate.with_changes``, so the invariants hold everywhere:

* the name is not empty (after trimming) and is one line of plain text (no line separator of any
  kind, no control character: ``checked_one_line``);
* the version starts at 1;
* the version goes up by exactly one when, and only when, the markdown content changes
  (a new name or a new default profile keeps the version);
* ``default_profile_id`` names a profile of the registry (checked by the service, which
  holds the registry);
* the content is UTF-8 text of at most ``MAX_CONTENT_BYTES`` bytes.

No I/O here: values in, values out.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from elynav_nb.errors import InvalidInput

__all__ = [
    "AGENT_NAME_PATTERN",
    "DEFAULT_PROFILES",
    "LINE_SEPARATORS",
    "MAX_CONTENT_BYTES",
    "MAX_NAME_LENGTH",
    "TEMPLATE_ID_PATTERN",
    "AgentDriftDetected",
    "AgentSynced",
    "AgentTemplate",
    "Profile",
    "ProfileRegistry",
    "TemplateCreated",
    "TemplateDeleted",
    "TemplateEvent",
    "TemplateUpdated",
    "changed_field_names",
    "checked_content",
    "checked_name",
    "checked_one_line",
    "content_hash",
    "slug_for_name",
    "validate_agent_name",
    "validate_template_id",
]

MAX_CONTENT_BYTES = 1024 * 1024
"""The cap on a template's markdown: 1 MiB of UTF-8. A system prompt is a few kB; 1 MiB leaves
room for long playbooks and keeps one template well under the MCP 4 MiB request bound."""

MAX_NAME_LENGTH = 200

TEMPLATE_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}\Z")
"""Template ids name files (``md/<id>.md``), so they are lowercase letters, digits and hyphens.
Use ``fullmatch``; the pattern ends in ``\\Z``, not ``$`` (which also matches before a final ``\\n``)."""

AGENT_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
"""Agent names name files (``.claude/agents/<name>.md``); Claude refuses names starting with ``-``.
Use ``fullmatch``; the pattern ends in ``\\Z``, not ``$`` (which also matches before a final ``\\n``)."""


def content_hash(content_md: str) -> str:
    """``sha256:<hex>`` of the UTF-8 bytes of ``content_md``: the ``contentHash`` of the index."""
    return "sha256:" + hashlib.sha256(content_md.encode("utf-8")).hexdigest()


def slug_for_name(name: str) -> str:
    """A file-safe slug of a template name (``"Code reviewer!"`` -> ``"code-reviewer"``)."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    slug = "-".join(words)[:48].strip("-")
    return slug or "template"


def validate_template_id(template_id: object) -> str:
    """``template_id`` if it is a well-formed id, else ``InvalidInput``."""
    if not isinstance(template_id, str) or not TEMPLATE_ID_PATTERN.fullmatch(template_id):
        raise InvalidInput(
            f"template id {template_id!r} is not valid: use lowercase letters, digits and hyphens",
            details={"field": "templateId"},
        )
    return template_id


def validate_agent_name(agent_name: object) -> str:
    """``agent_name`` if it can name a Claude agent file, else ``InvalidInput``."""
    if not isinstance(agent_name, str) or not AGENT_NAME_PATTERN.fullmatch(agent_name):
        raise InvalidInput(
            f"agent name {agent_name!r} is not valid: use letters, digits, '-' and '_', "
            "starting with a letter or digit, at most 64 characters",
            details={"field": "agentName"},
        )
    return agent_name


LINE_SEPARATORS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""Every character ``str.splitlines`` breaks a line on: none of them may be in one line of text."""


def checked_one_line(text: str, field_name: str, label: str) -> str:
    """``text`` when it is one line of plain text, else ``InvalidInput`` naming ``field_name``.

    Refused: every line separator (``LINE_SEPARATORS``), every other control character
    (Unicode category ``Cc``: tab, ``DEL``, the escape that starts an ANSI colour code...) and a lone
    surrogate (``Cs``: it has no UTF-8 form).
    ``label`` starts the message: ``"the template name"``.
    """
    for character in text:
        if character in LINE_SEPARATORS:
            raise InvalidInput(
                f"{label} must fit on one line: it holds a line break (U+{ord(character):04X})",
                details={"field": field_name},
            )
        category = unicodedata.category(character)
        if category == "Cc":
            raise InvalidInput(
                f"{label} must be plain text: it holds a control character (U+{ord(character):04X})",
                details={"field": field_name},
            )
        if category == "Cs":  # a lone surrogate: no UTF-8 form, the store could not write it
            raise InvalidInput(
                f"{label} is not valid Unicode text: it holds a lone surrogate (U+{ord(character):04X})",
                details={"field": field_name},
            )
    return text


def checked_name(name: object) -> str:
    """The trimmed name, or ``InvalidInput`` when it is empty, too long, or not one line of plain text."""
    if not isinstance(name, str):
        raise InvalidInput("the template name must be a string", details={"field": "name"})
    trimmed = name.strip()
    if not trimmed:
        raise InvalidInput("the template name is empty", details={"field": "name"})
    if len(trimmed) > MAX_NAME_LENGTH:
        raise InvalidInput(
            f"the template name has {len(trimmed)} characters; the limit is {MAX_NAME_LENGTH}",
            details={"field": "name"},
        )
    return checked_one_line(trimmed, "name", "the template name")


def checked_content(content_md: object) -> str:
    """``content_md`` when it is encodable text within ``MAX_CONTENT_BYTES``, else ``InvalidInput``."""
    if not isinstance(content_md, str):
        raise InvalidInput("the template content must be a string", details={"field": "content"})
    try:
        size = len(content_md.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(
            "the template content is not valid Unicode text (lone surrogates)", details={"field": "content"}
        ) from None
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(
            f"the template content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (1 MiB)",
            details={"field": "content", "size": size, "limit": MAX_CONTENT_BYTES},
        )
    return content_md


@dataclass(frozen=True)
class Profile:
    """What agents made from a template run with: the CLI adapter, the model, the permission mode, the tools."""

    id: str
    cli: str
    model: str
    permission_mode: str
    tools: tuple[str, ...] = ("Read", "Grep", "Glob")
    description: str = ""


DEFAULT_PROFILES: tuple[Profile, ...] = (
    Profile(
        "claude-sonnet", "claude", "sonnet", "default", description="Claude Code, Sonnet, asks before edits"
    ),
    Profile("claude-opus", "claude", "opus", "default", description="Claude Code, Opus, asks before edits"),
    Profile(
        "claude-haiku", "claude", "haiku", "default", description="Claude Code, Haiku, asks before edits"
    ),
    Profile(
        "claude-sonnet-editor",
        "claude",
        "sonnet",
        "acceptEdits",
        tools=("Read", "Grep", "Glob", "Edit", "Write"),
        description="Claude Code, Sonnet, may edit files",
    ),
    Profile("codex-default", "codex", "gpt-5-codex", "default", description="Codex CLI"),
    Profile("gemini-default", "gemini", "gemini-2.5-pro", "default", description="Gemini CLI"),
)


class ProfileRegistry:
    """The known profiles, by id; the first one is the default for new templates."""

    def __init__(self, profiles: Iterable[Profile] = DEFAULT_PROFILES) -> None:
        self._profiles: dict[str, Profile] = {}
        for profile in profiles:
            self._profiles[profile.id] = profile
        if not self._profiles:
            raise InvalidInput("a profile registry needs at least one profile")
        self.default_profile_id = next(iter(self._profiles))

    def ids(self) -> list[str]:
        return list(self._profiles)

    def get(self, profile_id: object) -> Profile:
        """The profile named ``profile_id``; ``InvalidInput`` listing the known ids otherwise."""
        if isinstance(profile_id, str) and profile_id in self._profiles:
            return self._profiles[profile_id]
        known = ", ".join(self._profiles)
        raise InvalidInput(
            f"unknown profile {profile_id!r}; known profiles: {known}", details={"field": "defaultProfileId"}
        )

    def __contains__(self, profile_id: object) -> bool:
        return isinstance(profile_id, str) and profile_id in self._profiles

    def __repr__(self) -> str:
        return f"ProfileRegistry({self.ids()!r})"


@dataclass(frozen=True)
class AgentTemplate:
    """One agent template. Build new ones with ``new``, change them with ``with_changes``."""

    id: str
    name: str
    content_md: str
    version: int
    default_profile_id: str

    def __post_init__(self) -> None:
        validate_template_id(self.id)
        object.__setattr__(self, "name", checked_name(self.name))
        checked_content(self.content_md)
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise InvalidInput(
                f"a template version starts at 1, got {self.version!r}", details={"field": "version"}
            )
        if not isinstance(self.default_profile_id, str) or not self.default_profile_id:
            raise InvalidInput("the default profile id is empty", details={"field": "defaultProfileId"})

    @classmethod
    def new(cls, template_id: str, name: str, content_md: str, default_profile_id: str) -> AgentTemplate:
        """A template at version 1."""
        return cls(template_id, name, content_md, 1, default_profile_id)

    @property
    def content_hash(self) -> str:
        return content_hash(self.content_md)

    def with_changes(
        self,
        *,
        content_md: str | None = None,
        name: str | None = None,
        default_profile_id: str | None = None,
    ) -> AgentTemplate:
        """A copy with the given fields changed; the version goes up by one only if the content changed."""
        new_version = self.version
        new_content = self.content_md
        if content_md is not None and content_md != self.content_md:
            new_content = content_md
            new_version = self.version + 1
        return replace(
            self,
            content_md=new_content,
            name=self.name if name is None else name,
            default_profile_id=self.default_profile_id if default_profile_id is None else default_profile_id,
            version=new_version,
        )

    def to_dict(self) -> dict[str, object]:
        """The wire shape shared by the MCP and OpenAI tools (camelCase, as the IdeA DTO)."""
        return {
            "id": self.id,
            "name": self.name,
            "contentMd": self.content_md,
            "version": self.version,
            "defaultProfileId": self.default_profile_id,
        }


# --- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateCreated:
    template_id: str
    name: str
    version: int


@dataclass(frozen=True)
class TemplateUpdated:
    """A template changed. ``content_changed`` says whether the version moved."""

    template_id: str
    previous_version: int
    version: int
    content_changed: bool
    changed_fields: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class TemplateDeleted:
    template_id: str
    version: int


@dataclass(frozen=True)
class AgentDriftDetected:
    """A synchronized agent was made from an older version of its template."""

    workspace: str
    agent_name: str
    template_id: str
    synced_template_version: int
    template_version: int


@dataclass(frozen=True)
class AgentSynced:
    workspace: str
    agent_name: str
    template_id: str
    previous_version: int
    version: int


TemplateEvent = TemplateCreated | TemplateUpdated | TemplateDeleted | AgentDriftDetected | AgentSynced


def changed_field_names(before: AgentTemplate, after: AgentTemplate) -> tuple[str, ...]:
    """The wire names of the fields that differ between two versions of one template."""
    names: list[str] = []
    if before.name != after.name:
        names.append("name")
    if before.content_md != after.content_md:
        names.append("contentMd")
    if before.default_profile_id != after.default_profile_id:
        names.append("defaultProfileId")
    return tuple(names)
