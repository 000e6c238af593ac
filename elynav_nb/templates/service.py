"""Template use cases: create, list, read, update, delete, with optimistic concurrency and events.

Where it sits: between the tool dispatcher / notebook object and the store. Each write runs in
one store transaction (exclusive inter-process lock): load the current template, check
``expected_version``, build the new value with the domain, commit. Events (``TemplateCreated``,
``TemplateUpdated``, ``TemplateDeleted``) go to subscribers after the commit, outside the lock.

Input is checked before the lock is taken, so a bad call (empty name, unknown profile, content
over 1 MiB, stale ``expected_version``) raises a typed error and changes nothing.

Decision (issue 4, seed lot B4): update takes ``content``, ``name`` and ``default_profile_id``,
each optional; the version moves only when the content changes; a new default profile affects
only agents created later. ``expected_version`` is accepted by update and delete. Because the
version counts content changes only, ``expected_version`` guards against a concurrent content
change; two concurrent renames of the same version both succeed, the last one wins.

An update never touches agents made from the template: they show drift until synced
(``workspace_agents.py``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from elynav_nb.errors import InvalidInput, VersionConflict
from elynav_nb.templates.domain import (
    AgentTemplate,
    ProfileRegistry,
    TemplateCreated,
    TemplateDeleted,
    TemplateEvent,
    TemplateUpdated,
    changed_field_names,
    checked_content,
    checked_name,
    validate_template_id,
)
from elynav_nb.templates.store import TemplateStore

__all__ = ["EventListener", "TemplateService"]

logger = logging.getLogger(__name__)

EventListener = Callable[[TemplateEvent], None]


def _checked_expected_version(expected_version: object) -> int | None:
    if expected_version is None:
        return None
    if isinstance(expected_version, bool) or not isinstance(expected_version, int) or expected_version < 1:
        raise InvalidInput(
            f"expected_version must be an integer >= 1, got {expected_version!r}",
            details={"field": "expectedVersion"},
        )
    return expected_version


class TemplateService:
    """The template use cases over one store and one profile registry."""

    def __init__(self, store: TemplateStore | None = None, profiles: ProfileRegistry | None = None) -> None:
        self.store = store if store is not None else TemplateStore()
        self.profiles = profiles if profiles is not None else ProfileRegistry()
        self._listeners: list[EventListener] = []
        self._listeners_lock = threading.Lock()

    @classmethod
    def open(cls, home: Path | str | None = None) -> TemplateService:
        """A service on the store at ``home`` (default: ``$ELYNAV_HOME`` or the platform data folder)."""
        return cls(TemplateStore(home))

    def __repr__(self) -> str:
        return f"TemplateService(home={str(self.store.home)!r})"

    # --- events ---------------------------------------------------------------------------

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener(event)`` after each committed change; returns a function that unsubscribes."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def publish(self, event: TemplateEvent) -> None:
        """Hand ``event`` to every listener; a failing listener is logged and does not undo the change."""
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a listener's bug must not turn a committed change into an error
                logger.exception("template event listener failed on %s", type(event).__name__)

    # --- reads ----------------------------------------------------------------------------

    def list_templates(self) -> list[AgentTemplate]:
        """Every template, in creation order, with its content."""
        return self.store.list_templates()

    def read(self, template_id: str) -> AgentTemplate:
        """One template (``TEMPLATE_NOT_FOUND`` when the id is unknown)."""
        return self.store.get(validate_template_id(template_id))

    # --- writes ---------------------------------------------------------------------------

    def create(self, name: str, content: str, default_profile_id: str | None = None) -> AgentTemplate:
        """A new template at version 1 (default profile: the registry's first)."""
        name = checked_name(name)
        checked_content(content)
        profile_id = self.profiles.default_profile_id if default_profile_id is None else default_profile_id
        self.profiles.get(profile_id)
        with self.store.writing() as transaction:
            template = AgentTemplate.new(transaction.allocate_id(name), name, content, profile_id)
            transaction.save(template, content_changed=True)
        self.publish(TemplateCreated(template.id, template.name, template.version))
        return template

    def update(
        self,
        template_id: str,
        content: str | None = None,
        name: str | None = None,
        default_profile_id: str | None = None,
        expected_version: int | None = None,
    ) -> AgentTemplate:
        """Change content, name and/or default profile. Stale ``expected_version``: ``VERSION_CONFLICT``."""
        validate_template_id(template_id)
        if content is None and name is None and default_profile_id is None:
            raise InvalidInput("nothing to update: give content, name or default_profile_id")
        if content is not None:
            checked_content(content)
        if name is not None:
            name = checked_name(name)
        if default_profile_id is not None:
            self.profiles.get(default_profile_id)
        expected = _checked_expected_version(expected_version)
        with self.store.writing() as transaction:
            current = transaction.load(template_id)
            self._check_expected_version(current, expected)
            updated = current.with_changes(
                content_md=content, name=name, default_profile_id=default_profile_id
            )
            if updated == current:
                return current
            transaction.save(updated, content_changed=updated.content_md != current.content_md)
        self.publish(
            TemplateUpdated(
                template_id,
                previous_version=current.version,
                version=updated.version,
                content_changed=updated.version != current.version,
                changed_fields=changed_field_names(current, updated),
            )
        )
        return updated

    def delete(self, template_id: str, expected_version: int | None = None) -> AgentTemplate:
        """Remove a template and its markdown file; returns what was deleted. Agents keep their files."""
        validate_template_id(template_id)
        expected = _checked_expected_version(expected_version)
        with self.store.writing() as transaction:
            current = transaction.load(template_id)
            self._check_expected_version(current, expected)
            transaction.remove(template_id)
        self.publish(TemplateDeleted(template_id, current.version))
        return current

    @staticmethod
    def _check_expected_version(current: AgentTemplate, expected_version: int | None) -> None:
        if expected_version is not None and expected_version != current.version:
            raise VersionConflict(
                f"template {current.id!r} is at version {current.version}, not {expected_version}: "
                "read it again, then retry",
                details={
                    "templateId": current.id,
                    "expectedVersion": expected_version,
                    "currentVersion": current.version,
                },
            )
