"""Typed records of the Docs document tree, and the tree as a pandas DataFrame.

Where it sits: the pure layer under ``rest.tree_client.DocsTreeClient`` (no I/O). It reads the JSON
La Suite Docs 5.4.1 serves for a document (``ListDocumentSerializer``: ``id``, ``path``,
``depth``, ``numchild``, the link settings, ``user_role``, ``abilities``...) into
``DocumentNode`` records, and shapes answers as ``DocumentList`` (a page or a whole listing),
``DocumentTree`` (documents placed under their parents) and ``DocumentChange`` (what a write did).

How data flows::

    JSON item   -> DocumentNode.from_json(item, instance)
    JSON page   -> DocumentList(nodes, count)            .to_frame(): one row per document
    nodes       -> DocumentTree.from_nodes(nodes)        .to_frame(): id, title, parent_id, depth,
                                                          path, title_path, updated_at, link reach
                                                          and role, user_role, can_* abilities
    tree/ JSON  -> nodes_from_nested(data, instance)      (Docs' nested ``children`` answer)

The parent of a document is found from its materialised path (7 characters a level): the
document whose path is the path minus its last level. ``require_ability`` is the check made
before a request when Docs already said what the caller may do (``NOT_ALLOWED``, nothing sent).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from elynav_nb.errors import InvalidInput, NotAllowed

if TYPE_CHECKING:
    import pandas

__all__ = [
    "FRAME_ABILITIES",
    "MOVE_POSITIONS",
    "PATH_STEP_LENGTH",
    "DocumentChange",
    "DocumentList",
    "DocumentNode",
    "DocumentTree",
    "MovePosition",
    "nodes_from_nested",
    "require_ability",
]

PATH_STEP_LENGTH: Final = 7
MovePosition = Literal["first-child", "last-child", "first-sibling", "last-sibling", "left", "right"]
MOVE_POSITIONS: Final[tuple[MovePosition, ...]] = (
    "first-child",
    "last-child",
    "first-sibling",
    "last-sibling",
    "left",
    "right",
)
# The abilities a tree frame shows as ``can_<ability>`` columns.
FRAME_ABILITIES: Final = (
    "update",
    "children_create",
    "move",
    "duplicate",
    "destroy",
    "restore",
    "favorite",
    "accesses_manage",
    "link_configuration",
)
_NODE_COLUMNS: Final = (
    "id",
    "title",
    "depth",
    "path",
    "numchild",
    "created_at",
    "updated_at",
    "deleted_at",
    "link_reach",
    "link_role",
    "computed_link_reach",
    "computed_link_role",
    "user_role",
    "is_favorite",
    "creator",
    "parent_id",
)
_TREE_COLUMNS: Final = (
    "id",
    "title",
    "parent_id",
    "depth",
    "level",
    "path",
    "title_path",
    "numchild",
    "updated_at",
    "link_reach",
    "link_role",
    "user_role",
    "is_favorite",
)


def _text(value: Any) -> str | None:
    """A JSON scalar as text; ``None`` for null and for lists and objects (not text in any Docs field)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):  # bool included: str(True) as before
        return str(value)
    return None


def _integer(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True)
class DocumentNode:
    """One Docs document as the tree endpoints serve it (secret-free: no content).

    ``link_reach`` / ``link_role`` are the document's own settings; ``computed_*`` include what it
    inherits from its ancestors (what actually applies). ``user_role`` is the caller's role from
    accesses (on it or an ancestor); ``abilities`` what the caller may do. ``parent_id`` is known
    only for search answers (the top parent) and tree answers (the real parent).
    """

    id: str
    title: str | None
    path: str
    depth: int
    numchild: int = 0
    created_at: str | None = None
    updated_at: str | None = None
    deleted_at: str | None = None
    link_reach: str | None = None
    link_role: str | None = None
    computed_link_reach: str | None = None
    computed_link_role: str | None = None
    ancestors_link_reach: str | None = None
    ancestors_link_role: str | None = None
    user_role: str | None = None
    is_favorite: bool | None = None
    creator: str | None = None
    excerpt: str | None = None
    nb_accesses_direct: int | None = None
    nb_accesses_ancestors: int | None = None
    abilities: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    parent_id: str | None = None
    instance: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(
        cls, data: dict[str, Any], *, instance: str | None = None, parent_id: str | None = None
    ) -> DocumentNode:
        """A node from one serialized document (``parent`` of a search item gives ``parent_id``)."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise InvalidInput("a Docs document must be a JSON object with an id")
        parent = data.get("parent")
        if parent_id is None and isinstance(parent, dict) and isinstance(parent.get("id"), str):
            parent_id = parent["id"]
        given_path = data.get("path")
        path = given_path if isinstance(given_path, str) else ""
        favorite = data.get("is_favorite")
        abilities = data.get("abilities")
        return cls(
            id=data["id"],
            title=_text(data.get("title")),
            path=path,
            depth=_integer(data.get("depth"), len(path) // PATH_STEP_LENGTH),
            numchild=_integer(data.get("numchild"), 0),
            created_at=_text(data.get("created_at")),
            updated_at=_text(data.get("updated_at")),
            deleted_at=_text(data.get("deleted_at")),
            link_reach=_text(data.get("link_reach")),
            link_role=_text(data.get("link_role")),
            computed_link_reach=_text(data.get("computed_link_reach")),
            computed_link_role=_text(data.get("computed_link_role")),
            ancestors_link_reach=_text(data.get("ancestors_link_reach")),
            ancestors_link_role=_text(data.get("ancestors_link_role")),
            user_role=_text(data.get("user_role")),
            is_favorite=favorite if isinstance(favorite, bool) else None,
            creator=_text(data.get("creator")),
            excerpt=_text(data.get("excerpt")),
            nb_accesses_direct=_integer(data.get("nb_accesses_direct"), 0),
            nb_accesses_ancestors=_integer(data.get("nb_accesses_ancestors"), 0),
            abilities=dict(abilities) if isinstance(abilities, dict) else {},
            parent_id=parent_id,
            instance=instance,
            raw={key: value for key, value in data.items() if key != "children"},
        )

    @property
    def parent_path(self) -> str:
        """The parent's materialised path (``""`` for a root)."""
        return self.path[:-PATH_STEP_LENGTH]

    @property
    def is_root(self) -> bool:
        return self.depth <= 1

    @property
    def is_deleted(self) -> bool:
        """In the trash, itself or under a trashed ancestor (Docs' ``deleted_at``)."""
        return self.deleted_at is not None

    @property
    def link(self) -> str | None:
        return f"{self.instance}/docs/{self.id}/" if self.instance else None

    def can(self, ability: str) -> bool:
        """What Docs said the caller may do (``False`` for an ability it did not serve)."""
        return self.abilities.get(ability) is True

    def is_descendant_of(self, other: DocumentNode) -> bool:
        return bool(other.path) and self.path.startswith(other.path) and self.depth > other.depth

    def row(self) -> dict[str, Any]:
        """The frame row of this document: its fields and ``can_<ability>`` columns."""
        values = {name: getattr(self, name) for name in _NODE_COLUMNS}
        for ability in FRAME_ABILITIES:
            values[f"can_{ability}"] = self.can(ability)
        return values

    def to_frame(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame([self.row()], columns=_node_frame_columns())


def _node_frame_columns() -> list[str]:
    return [*_NODE_COLUMNS, *(f"can_{ability}" for ability in FRAME_ABILITIES)]


@dataclass(frozen=True)
class DocumentList:
    """Documents from one listing, in the server's order; ``count`` is the server's total."""

    documents: tuple[DocumentNode, ...]
    count: int | None = None
    requests: int = 0

    def __len__(self) -> int:
        return len(self.documents)

    @overload
    def __getitem__(self, index: int) -> DocumentNode: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[DocumentNode, ...]: ...

    def __getitem__(self, index: int | slice) -> DocumentNode | tuple[DocumentNode, ...]:
        return self.documents[index]

    def __iter__(self) -> Iterator[DocumentNode]:
        return iter(self.documents)

    def __repr__(self) -> str:
        total = "" if self.count is None else f" of {self.count}"
        return f"<DocumentList {len(self.documents)}{total} documents, {self.requests} requests>"

    @property
    def complete(self) -> bool:
        """True when every document the server counted is here."""
        return self.count is None or self.count == len(self.documents)

    def ids(self) -> list[str]:
        return [document.id for document in self.documents]

    def by_title(self, title: str) -> DocumentNode:
        """The first document with exactly this title (``InvalidInput`` when there is none)."""
        for document in self.documents:
            if document.title == title:
                return document
        raise InvalidInput("no document has this title in the list", details={"title": title[:200]})

    def to_frame(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame([node.row() for node in self.documents], columns=_node_frame_columns())

    def _repr_html_(self) -> str:
        return str(self.to_frame().to_html(max_rows=60))


@dataclass(frozen=True)
class DocumentTree:
    """Documents placed under their parents, in depth-first order (by materialised path).

    ``parent_of`` maps each id to its parent's id when the parent is in the tree; a document whose
    parent is not here (not shared with you, or outside the subtree asked for) is a top of it.
    """

    nodes: tuple[DocumentNode, ...]
    parent_of: dict[str, str | None] = field(default_factory=dict, compare=False)
    requests: int = 0

    @classmethod
    def from_nodes(cls, nodes: Iterable[DocumentNode], *, requests: int = 0) -> DocumentTree:
        unique: dict[str, DocumentNode] = {}
        for node in nodes:
            unique.setdefault(node.id, node)
        ordered = sorted(unique.values(), key=lambda node: node.path)
        id_by_path = {node.path: node.id for node in ordered if node.path}
        parent_of = {
            node.id: id_by_path.get(node.parent_path) if node.depth > 1 else None for node in ordered
        }
        return cls(tuple(ordered), parent_of, requests)

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return (
            f"<DocumentTree {len(self.nodes)} documents, {len(self.tops())} tops, {self.requests} requests>"
        )

    def __iter__(self) -> Iterator[DocumentNode]:
        return iter(self.nodes)

    def __contains__(self, document_id: object) -> bool:
        return document_id in self.parent_of

    def get(self, document_id: str) -> DocumentNode:
        for node in self.nodes:
            if node.id == document_id:
                return node
        raise InvalidInput("this document is not in the tree", details={"document_id": document_id})

    def tops(self) -> list[DocumentNode]:
        """The documents whose parent is not in the tree."""
        return [node for node in self.nodes if self.parent_of.get(node.id) is None]

    def children_of(self, document_id: str) -> list[DocumentNode]:
        return [node for node in self.nodes if self.parent_of.get(node.id) == document_id]

    def levels(self) -> dict[str, int]:
        """Each document's level: 0 at a top of this tree, parent's level + 1 below."""
        levels: dict[str, int] = {}
        for node in self.nodes:  # parents come first: the nodes are sorted by path
            parent_id = self.parent_of.get(node.id)
            levels[node.id] = levels[parent_id] + 1 if parent_id is not None else 0
        return levels

    def pruned(self, max_level: int) -> DocumentTree:
        """The documents down to ``max_level`` levels below each top (0: the tops only)."""
        levels = self.levels()
        kept = tuple(node for node in self.nodes if levels[node.id] <= max_level)
        return DocumentTree(kept, {node.id: self.parent_of.get(node.id) for node in kept}, self.requests)

    def to_frame(self) -> pandas.DataFrame:
        """One row per document, depth-first: ``level`` counts from 0 at a top of this tree and
        ``title_path`` joins the titles from that top (``" / "``). ``link_reach`` and ``link_role``
        are what applies (inherited from ancestors included); ``can_*`` are your abilities."""
        import pandas

        levels = self.levels()
        title_paths: dict[str, str] = {}
        rows: list[dict[str, Any]] = []
        for node in self.nodes:
            parent_id = self.parent_of.get(node.id)
            title = node.title if node.title is not None else ""
            title_paths[node.id] = f"{title_paths[parent_id]} / {title}" if parent_id is not None else title
            row: dict[str, Any] = {
                "id": node.id,
                "title": node.title,
                "parent_id": parent_id,
                "depth": node.depth,
                "level": levels[node.id],
                "path": node.path,
                "title_path": title_paths[node.id],
                "numchild": node.numchild,
                "updated_at": node.updated_at,
                "link_reach": node.computed_link_reach or node.link_reach,
                "link_role": node.computed_link_role if node.computed_link_reach else node.link_role,
                "user_role": node.user_role,
                "is_favorite": node.is_favorite,
            }
            for ability in FRAME_ABILITIES:
                row[f"can_{ability}"] = node.can(ability)
            rows.append(row)
        columns = [*_TREE_COLUMNS, *(f"can_{ability}" for ability in FRAME_ABILITIES)]
        return pandas.DataFrame(rows, columns=columns)

    def _repr_html_(self) -> str:
        return str(self.to_frame().to_html(max_rows=60))


@dataclass(frozen=True)
class DocumentChange:
    """What a write did: ``action`` (created, renamed, moved, duplicated, deleted, restored,
    favorited, unfavorited), on which document, and the server's message."""

    action: str
    document_id: str
    message: str | None = None
    new_document_id: str | None = None
    target_document_id: str | None = None
    position: str | None = None
    changed: bool = True

    def to_frame(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame([self.__dict__])


def nodes_from_nested(data: Any, *, instance: str | None = None) -> list[DocumentNode]:
    """Docs' ``tree/`` answer (one node with nested ``children``) as nodes with their parent ids."""
    if data is None:
        return []
    if not isinstance(data, dict):
        raise InvalidInput("a Docs tree answer must be a JSON object")
    nodes: list[DocumentNode] = []
    pending: list[tuple[dict[str, Any], str | None]] = [(data, None)]
    while pending:
        item, parent_id = pending.pop()
        node = DocumentNode.from_json(item, instance=instance, parent_id=parent_id)
        nodes.append(node)
        children = item.get("children")
        for child in reversed(children if isinstance(children, list) else []):
            if isinstance(child, dict):
                pending.append((child, node.id))
    return nodes


def require_ability(node: DocumentNode, ability: str, what: str) -> None:
    """``NotAllowed`` (nothing sent) when Docs said the caller may not ``ability`` this document."""
    if node.abilities and not node.can(ability):
        raise NotAllowed(
            f"Docs does not allow these credentials to {what} (ability {ability!r} is false)",
            details={"document_id": node.id, "ability": ability},
        )
