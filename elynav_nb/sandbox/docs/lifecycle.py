"""A sandbox document's lifecycle as Docs writes it: validated fields, moves with their access
rules, and duplicates.

Where it sits: the pure half of the write routes (``lifecycle_routes``); no I/O. Reproduced
from La Suite Docs v5.4.1 (``core/api/viewsets.py`` ``move``, ``_duplicate_document``;
``core/api/serializers.py``):

* ``clean_text``: DRF's ``CharField`` (trimmed, ``null`` and blank allowed, numbers become text,
  anything else is "Not a valid string.", a maximum length);
* ``move_document``: after treebeard's move, a document whose scope changes (it was a root,
  it becomes a root, or it changes tree) loses its direct accesses; one that becomes a sibling
  of a root gets the owners of its old root back;
* ``duplicate_document``: ``"Copy of <title>"``, the content copied, the link settings only
  ``with_accesses``; a root (or a sub-document for an editor or more) becomes the last sibling,
  a sub-document copied by a lesser role becomes a new root owned by the copier; a copied root is
  owned by the copier (plus the other accesses ``with_accesses``, for an owner/administrator);
  ``with_descendants`` copies the subtree that is not in the trash.

How data flows: the routes validate the body, then call these functions on the store.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from elynav_nb.sandbox.docs.abilities import PRIVILEGED_ROLES, role_of
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxStore, SandboxUser
from elynav_nb.sandbox.docs.tree import MOVE_POSITIONS

__all__ = [
    "TITLE_MAX_LENGTH",
    "FieldError",
    "FieldErrors",
    "clean_boolean",
    "clean_document_fields",
    "clean_move",
    "clean_text",
    "clean_uuid",
    "duplicate_document",
    "move_document",
]

TITLE_MAX_LENGTH: Final = 255
EXCERPT_MAX_LENGTH: Final = 300
_TRUE_VALUES: Final = ("t", "y", "yes", "true", "on", "1")
_FALSE_VALUES: Final = ("f", "n", "no", "false", "off", "0")
_CHILD_POSITIONS: Final = ("first-child", "last-child")
_EDITOR_OR_MORE: Final = ("editor", "administrator", "owner")


class FieldError(ValueError):
    """One DRF field error: ``{field: [message]}``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FieldErrors(ValueError):
    """Every field error of one body (DRF's 400 answer)."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(str(errors))
        self.errors = errors


def clean_text(value: Any, max_length: int) -> str | None:
    """DRF ``CharField(allow_null=True, allow_blank=True, max_length=...)``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError("Not a valid string.")
    text = str(value).strip()
    if len(text) > max_length:
        raise FieldError(f"Ensure this field has no more than {max_length} characters.")
    return text


def clean_uuid(value: Any) -> str:
    """DRF ``UUIDField``."""
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(uuid.UUID(int=value))
        if isinstance(value, str):
            return str(uuid.UUID(hex=value))
    except ValueError:
        pass
    raise FieldError("Must be a valid UUID.")


def clean_boolean(value: Any) -> bool:
    """DRF ``BooleanField``."""
    if value is True or value is False:
        return value
    if isinstance(value, (int, str)):
        text = str(value).strip().lower()
        if text in _TRUE_VALUES:
            return True
        if text in _FALSE_VALUES:
            return False
    raise FieldError("Must be a valid boolean.")


def clean_document_fields(body: dict[str, Any], *, creating: bool, store: SandboxStore) -> dict[str, Any]:
    """``DocumentSerializer``'s writable fields (``id`` only when creating); raises ``dict`` errors."""
    cleaned: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, max_length in (("title", TITLE_MAX_LENGTH), ("excerpt", EXCERPT_MAX_LENGTH)):
        if name in body:
            try:
                cleaned[name] = clean_text(body[name], max_length)
            except FieldError as error:
                errors[name] = [error.message]
    if creating and body.get("id") is not None:
        try:
            cleaned["id"] = store.checked_new_id(clean_uuid(body["id"]))
        except FieldError as error:
            errors["id"] = [error.message]
        except ValueError as error:
            errors["id"] = [str(error)]
    if "websocket" in body:
        try:
            cleaned["websocket"] = clean_boolean(body["websocket"])
        except FieldError as error:
            errors["websocket"] = [error.message]
    if errors:
        raise FieldErrors(errors)
    return cleaned


def clean_move(body: dict[str, Any]) -> tuple[str, str]:
    """``MoveDocumentSerializer``: ``target_document_id`` (required UUID), ``position``."""
    errors: dict[str, list[str]] = {}
    target = ""
    if body.get("target_document_id") is None:
        key = "This field may not be null." if "target_document_id" in body else "This field is required."
        errors["target_document_id"] = [key]
    else:
        try:
            target = clean_uuid(body["target_document_id"])
        except FieldError as error:
            errors["target_document_id"] = [error.message]
    position = body.get("position", "last-child")
    if position not in MOVE_POSITIONS:
        errors["position"] = [f'"{position}" is not a valid choice.']
    if errors:
        raise FieldErrors(errors)
    return target, str(position)


def move_document(
    store: SandboxStore, document: SandboxDocument, target: SandboxDocument, position: str
) -> None:
    """``document.move(target, position)`` and Docs' access rules after it (``InvalidMove`` passes)."""
    old_root = store.tree.root_of(document)
    was_root = document.depth == 1
    becomes_sibling_of_root = position not in _CHILD_POSITIONS and target.depth == 1
    old_root_owners = {}
    if becomes_sibling_of_root and old_root is not None:
        old_root_owners = {user_id: role for user_id, role in old_root.accesses.items() if role == "owner"}
    target_root_before = store.tree.root_of(target)
    store.tree.move(document, target, position)
    scope_changes = was_root or becomes_sibling_of_root or old_root is not target_root_before
    if scope_changes:
        document.accesses.clear()
    if old_root_owners and "owner" not in document.accesses.values():
        document.accesses.update(old_root_owners)


def _capfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def duplicate_document(
    store: SandboxStore,
    original: SandboxDocument,
    user: SandboxUser,
    *,
    with_accesses: bool,
    with_descendants: bool,
    new_parent: SandboxDocument | None = None,
) -> SandboxDocument:
    """Docs' ``_duplicate_document`` (the copy of ``original`` and, if asked, of its subtree)."""
    user_role = role_of(store, original, user)
    is_owner_or_admin = user_role in PRIVILEGED_ROLES
    stamp = store.stamp()
    copy = SandboxDocument(
        id=str(uuid.uuid4()),
        title=_capfirst(f"copy of {original.title}"),
        creator_id=user.id,
        content=original.content,
        created_at=stamp,
        updated_at=stamp,
    )
    if with_accesses:
        copy.link_reach, copy.link_role = original.link_reach, original.link_role
    other_accesses = {uid: role for uid, role in original.accesses.items() if uid != user.id}
    is_root = original.depth == 1
    lesser_role = user_role not in _EDITOR_OR_MORE
    if new_parent is not None:
        store.tree.add_child(new_parent, copy)
        if with_accesses and is_owner_or_admin:
            copy.accesses.update(other_accesses)
    elif not is_root and lesser_role:
        store.tree.add_root(copy)
        copy.accesses[user.id] = "owner"
    else:
        store.tree.add_last_sibling(original, copy)
        if is_root:
            copy.accesses[user.id] = "owner"
            if with_accesses and is_owner_or_admin:
                copy.accesses.update(other_accesses)
    store.documents[copy.id] = copy
    if with_descendants:
        for child in store.tree.children(original):
            if child.ancestors_deleted_at is None:
                duplicate_document(
                    store, child, user, with_accesses=with_accesses, with_descendants=True, new_parent=copy
                )
    return copy
