"""Who may do what on a sandbox document, and the JSON Docs shows for it.

Where it sits: the pure rules of ``SandboxStore`` (``store``), used by every REST route and by
the collaboration gate. No I/O. Reproduced from La Suite Docs v5.4.1 (``core/models.py``
``Document.get_role`` / ``get_abilities``, ``core/choices.py``, ``core/api/serializers.py``
``ListDocumentSerializer``):

* the role is the best of the user's accesses on the document **and every ancestor** (trashed
  ones too); reader < commenter < editor < administrator < owner; ``user_role`` shows it;
* link settings are inherited: ``ancestors_link_*`` is the equivalent definition of the
  ancestors (none for a root, none when the parent is trashed): the highest reach wins, then the
  highest role at that reach, and the role is ``None`` when the reach is ``restricted``;
* abilities: the link role counts for ``public``, or ``authenticated`` when signed in; a trashed
  document gives nothing but ``retrieve``/``tree``/``content_retrieve`` to an owner and
  ``restore`` to an owner of the document trashed itself. All 35 keys Docs serves.

How data flows: ``abilities(store, document, user)`` and ``document_json(store, document, user)``
read the store through ``AbilityFacts`` (its tree and link traces: this module does not import
``store``) and the records of ``records``; ``links`` lets a route pass the ancestors' links it already
knows (Docs' ``paths_links_mapping``: the tree route shows a trashed document without them).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any, Final, Protocol

from elynav_nb.sandbox.docs.records import SandboxDocument, SandboxUser, format_datetime
from elynav_nb.sandbox.docs.tree import MaterializedPathTree

__all__ = [
    "LINK_REACHES",
    "LINK_ROLES",
    "ROLES",
    "AbilityFacts",
    "LinkDefinition",
    "abilities",
    "ancestors_links",
    "document_json",
    "equivalent_link_definition",
    "max_role",
    "role_of",
    "title_matches",
]

ROLES: Final = ("reader", "commenter", "editor", "administrator", "owner")
LINK_REACHES: Final = ("restricted", "authenticated", "public")
LINK_ROLES: Final = ("reader", "commenter", "editor")
PRIVILEGED_ROLES: Final = ("administrator", "owner")
AI_ALLOW_REACH_FROM: Final = "authenticated"  # Docs' default setting

LinkDefinition = tuple[str | None, str | None]  # (link_reach, link_role)


class AbilityFacts(Protocol):
    """What the rules read of the store (``SandboxStore`` is one): the tree, and who opened what by link."""

    @property
    def tree(self) -> MaterializedPathTree[SandboxDocument]: ...

    @property
    def link_traces(self) -> set[tuple[str, str]]: ...


def _priority(choices: Sequence[str], value: str | None) -> int:
    return choices.index(value) + 1 if value in choices else 0


def max_role(*roles: str | None) -> str | None:
    """The highest role (``RoleChoices.max``), ``None`` when none is given."""
    best: str | None = None
    for role in roles:
        if _priority(ROLES, role) > _priority(ROLES, best):
            best = role
    return best


def equivalent_link_definition(links: Sequence[LinkDefinition]) -> LinkDefinition:
    """Docs' ``get_equivalent_link_definition``: highest reach, then highest role at that reach."""
    if not links:
        return (None, None)
    top_reach = max(links, key=lambda link: _priority(LINK_REACHES, link[0]))[0]
    if top_reach == "restricted":
        return (top_reach, None)
    roles_at_reach = [role for reach, role in links if reach == top_reach]
    return (top_reach, max(roles_at_reach, key=lambda role: _priority(LINK_ROLES, role)))


def _link_select_options(definition: LinkDefinition) -> dict[str, list[str] | None]:
    reach_floor = _priority(LINK_REACHES, definition[0])
    role_floor = _priority(LINK_ROLES, definition[1])
    return {
        reach: None
        if reach == "restricted"
        else [role for role in LINK_ROLES if _priority(LINK_ROLES, role) >= role_floor]
        for reach in LINK_REACHES
        if _priority(LINK_REACHES, reach) >= reach_floor
    }


def role_of(store: AbilityFacts, document: SandboxDocument, user: SandboxUser | None) -> str | None:
    """The user's role from accesses on the document and its ancestors (links not counted)."""
    if user is None:
        return None
    roles = [ancestor.accesses.get(user.id) for ancestor in store.tree.ancestors(document)]
    roles.append(document.accesses.get(user.id))
    return max_role(*roles)


def ancestors_links(store: AbilityFacts, document: SandboxDocument) -> list[LinkDefinition]:
    """The link settings of the ancestors Docs counts: none for a root or under a trashed parent."""
    if document.depth <= 1:
        return []
    parent = store.tree.parent(document)
    if parent is None or parent.ancestors_deleted_at is not None:
        return []
    return [(ancestor.link_reach, ancestor.link_role) for ancestor in store.tree.ancestors(document)]


def abilities(
    store: AbilityFacts,
    document: SandboxDocument,
    user: SandboxUser | None,
    *,
    links: Sequence[LinkDefinition] | None = None,
) -> dict[str, Any]:
    """``Document.get_abilities(user)``: the 35 keys Docs 5.4.1 serves."""
    signed_in = user is not None
    role = role_of(store, document, user)
    is_owner = role == "owner"
    is_deleted = document.ancestors_deleted_at is not None
    is_owner_or_admin = role in PRIVILEGED_ROLES and not is_deleted
    has_access_role = role is not None and not is_deleted
    can_update_from_access = (is_owner_or_admin or role == "editor") and not is_deleted
    has_trace = user is not None and (user.id, document.id) in store.link_traces
    can_leave = (
        signed_in
        and not is_deleted
        and ((has_access_role and not is_owner_or_admin) or (not has_access_role and has_trace))
    )
    inherited = equivalent_link_definition(ancestors_links(store, document) if links is None else links)
    computed = equivalent_link_definition([inherited, (document.link_reach, document.link_role)])
    if computed[0] == "public" or (computed[0] == "authenticated" and signed_in):
        role = max_role(role, computed[1])
    can_get = role is not None and not is_deleted
    retrieve = can_get or is_owner
    can_update = (is_owner_or_admin or role == "editor") and not is_deleted
    can_comment = (can_update or role == "commenter") and not is_deleted
    if document.depth == 1:
        can_destroy = is_owner and not is_deleted
    else:
        is_creator = user is not None and document.creator_id == user.id
        can_destroy = (is_owner_or_admin or is_creator) and not is_deleted
    ai_access = {
        "public": can_update,
        "authenticated": signed_in and can_update,
        "restricted": can_update_from_access,
    }[AI_ALLOW_REACH_FROM]
    return {
        "accesses_manage": is_owner_or_admin,
        "accesses_view": has_access_role,
        "ai_proxy": ai_access,
        "ai_transform": ai_access,
        "ai_translate": ai_access,
        "attachment_upload": can_update,
        "media_check": can_get,
        "can_edit": can_update,
        "children_list": can_get,
        "children_create": can_update and signed_in,
        "collaboration_auth": can_get,
        "comment": can_comment,
        "formatted_content": can_get,
        "content_patch": can_update,
        "content_retrieve": retrieve,
        "cors_proxy": can_get,
        "descendants": can_get,
        "destroy": can_destroy,
        "duplicate": can_get and signed_in,
        "favorite": can_get and signed_in,
        "link_configuration": is_owner_or_admin,
        "invite_owner": is_owner and not is_deleted,
        "leave": can_leave,
        "move": is_owner_or_admin and not is_deleted,
        "partial_update": can_update,
        "restore": is_owner and document.deleted_at is not None,
        "retrieve": retrieve,
        "media_auth": can_get,
        "link_select_options": _link_select_options(inherited),
        "tree": retrieve,
        "update": can_update,
        "versions_destroy": is_owner_or_admin,
        "versions_list": has_access_role,
        "versions_retrieve": has_access_role,
        "search": can_get,
    }


def _nb_accesses(store: AbilityFacts, document: SandboxDocument) -> tuple[int, int]:
    on_path = 0
    for holder in [*store.tree.ancestors(document), document]:
        if holder.ancestors_deleted_at is None:
            on_path += len(holder.accesses)
    return len(document.accesses), on_path


def document_json(
    store: AbilityFacts,
    document: SandboxDocument,
    user: SandboxUser | None,
    *,
    favorite: bool | None,
    links: Sequence[LinkDefinition] | None = None,
) -> dict[str, Any]:
    """``ListDocumentSerializer`` (and ``DocumentSerializer``): ``is_favorite`` is left out when
    ``favorite`` is ``None`` (Docs' instances that were never annotated: create, trashbin)."""
    inherited = equivalent_link_definition(ancestors_links(store, document) if links is None else links)
    computed = equivalent_link_definition([inherited, (document.link_reach, document.link_role)])
    direct, on_path = _nb_accesses(store, document)
    data: dict[str, Any] = {
        "id": document.id,
        "abilities": abilities(store, document, user, links=links),
        "ancestors_link_reach": inherited[0],
        "ancestors_link_role": inherited[1],
        "computed_link_reach": computed[0],
        "computed_link_role": computed[1],
        "created_at": document.created_at,
        "creator": document.creator_id,
        "deleted_at": format_datetime(document.ancestors_deleted_at),
        "depth": document.depth,
        "excerpt": document.excerpt,
        "is_favorite": favorite,
        "link_role": document.link_role,
        "link_reach": document.link_reach,
        "nb_accesses_ancestors": on_path,
        "nb_accesses_direct": direct,
        "numchild": document.numchild,
        "path": document.path,
        "title": document.title,
        "updated_at": document.updated_at,
        "user_role": role_of(store, document, user),
    }
    if favorite is None:
        del data["is_favorite"]
    return data


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(
        character for character in decomposed if unicodedata.category(character) != "Mn"
    ).casefold()


def title_matches(title: str | None, wanted: str) -> bool:
    """Docs' title filter: ``unaccent(title) ILIKE %unaccent(wanted)%`` (a blank value filters nothing)."""
    if not wanted:
        return True
    return title is not None and _folded(wanted) in _folded(title)
