"""The Docs sandbox's document tree: Docs' materialised path, its moves and its soft deletes.

Where it sits: the pure tree under ``SandboxStore`` (``store``), used by the tree routes
(``tree_routes``, ``lifecycle_routes``) and by the rules that inherit roles and links
along the path (``abilities``). No I/O.

What it reproduces (La Suite Docs v5.4.1, ``core/models.py`` ``Document``, on django-treebeard
4.8.0's ``MP_Node``; design note ``docs-tree-api.md``):

* paths of 7 characters a level in base 62 (``0-9A-Za-z``), compared byte-wise; ``depth`` is
  ``len(path) / 7`` and ``numchild`` is stored, not counted;
* a new root goes after the last root; a new child takes ``parent.path + "0000001"`` when the
  parent is a leaf, else the last child's path + 1, where Docs' leaf is
  ``not has_deleted_children and numchild == 0`` (a new child never reuses a trashed child's path);
* a move is treebeard's ``MP_MoveHandler``: the statements are planned on the tree as it is, then
  run one after the other (a temporary path when moving left among siblings, the siblings on the
  right shifted from the rightmost, holes kept, ``numchild`` of the old and new parents);
* ``soft_delete`` and ``restore`` with ``deleted_at`` / ``ancestors_deleted_at`` as Docs sets them.

How data flows: the store creates a ``SandboxDocument`` and asks ``add_root`` / ``add_child`` /
``add_last_sibling`` for its place; ``move`` re-keys whole branches; readers ask ``children``,
``ancestors``, ``descendants`` (deleted documents included, as treebeard's querysets are).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Generic, Protocol, TypeVar

__all__ = [
    "ALPHABET",
    "MOVE_POSITIONS",
    "STEP_LENGTH",
    "InvalidMove",
    "MaterializedPathTree",
    "OrphanedParent",
    "TreeNode",
    "filter_root_paths",
    "parent_path",
]

ALPHABET: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
STEP_LENGTH: Final = 7
MOVE_POSITIONS: Final = ("first-child", "last-child", "first-sibling", "last-sibling", "left", "right")
_CHILD_POSITIONS: Final = ("first-child", "last-child")


class TreeNode(Protocol):
    """What the tree reads and writes on a document."""

    path: str
    depth: int
    numchild: int
    has_deleted_children: bool
    deleted_at: datetime | None
    ancestors_deleted_at: datetime | None
    updated_at: str


NodeT = TypeVar("NodeT", bound=TreeNode)


class InvalidMove(ValueError):
    """treebeard's ``InvalidMoveToDescendant``: into itself or under its own descendant."""


class OrphanedParent(RuntimeError):
    """Where Docs 5.4.1 answers 500: a document that once had a child trashed is never a leaf again
    (``has_deleted_children`` stays true), so when it has no child row left (the child was restored
    and moved away), treebeard's ``get_last_child()`` is ``None`` and ``add_child`` or a move into it
    as a child fails with an ``AttributeError`` (checked against django-treebeard 4.8.0)."""


def _step(number: int) -> str:
    digits = ""
    while number:
        number, remainder = divmod(number, len(ALPHABET))
        digits = ALPHABET[remainder] + digits
    if len(digits) > STEP_LENGTH:
        raise OverflowError("no more room on this level of the tree")
    return digits.rjust(STEP_LENGTH, ALPHABET[0])


def _step_number(step: str) -> int:
    number = 0
    for character in step:
        number = number * len(ALPHABET) + ALPHABET.index(character)
    return number


def _next_path(path: str) -> str:
    """The path of the next slot on the same level (treebeard ``_inc_path``)."""
    return path[:-STEP_LENGTH] + _step(_step_number(path[-STEP_LENGTH:]) + 1)


def _path_at(base_path: str, depth: int, position: int) -> str:
    """treebeard ``_get_path``: ``base_path`` cut to ``depth - 1`` levels, then step ``position``."""
    return base_path[: (depth - 1) * STEP_LENGTH] + _step(position)


def parent_path(path: str) -> str:
    """The parent's path (``""`` for a root)."""
    return path[:-STEP_LENGTH]


def filter_root_paths(sorted_paths: Iterable[str]) -> list[str]:
    """Docs' ``filter_root_paths``: keep the paths that are not under an earlier kept path."""
    roots: list[str] = []
    for path in sorted_paths:
        if not roots or not path.startswith(roots[-1]):
            roots.append(path)
    return roots


@dataclass(frozen=True)
class _Branch:
    """``UPDATE ... SET path = new || substr(path, len(old) + 1) WHERE path LIKE old || '%'``."""

    old_prefix: str
    new_prefix: str


@dataclass(frozen=True)
class _ChildCount:
    """``UPDATE ... SET numchild = numchild + delta WHERE path = path``."""

    path: str
    delta: int


class MaterializedPathTree(Generic[NodeT]):
    """Every document of one sandbox by path, with treebeard's placement rules."""

    def __init__(self) -> None:
        self.by_path: dict[str, NodeT] = {}

    # --- reading -------------------------------------------------------------------------------

    @staticmethod
    def is_leaf(node: NodeT) -> bool:
        """Docs' override: a parent that ever had a child trashed is never a leaf again."""
        return not node.has_deleted_children and node.numchild == 0

    def parent(self, node: NodeT) -> NodeT | None:
        return self.by_path.get(parent_path(node.path)) if node.depth > 1 else None

    def ancestors(self, node: NodeT) -> list[NodeT]:
        """From the root down to the parent (those that exist)."""
        found = []
        for depth in range(1, node.depth):
            ancestor = self.by_path.get(node.path[: depth * STEP_LENGTH])
            if ancestor is not None:
                found.append(ancestor)
        return found

    def root_of(self, node: NodeT) -> NodeT | None:
        return self.by_path.get(node.path[:STEP_LENGTH])

    def roots(self) -> list[NodeT]:
        return sorted((node for node in self.by_path.values() if node.depth == 1), key=_path_key)

    def children(self, node: NodeT) -> list[NodeT]:
        """treebeard ``get_children``: none for a leaf, else every child row (trashed ones too)."""
        if self.is_leaf(node):
            return []
        return self._children_rows(node.path, node.depth)

    def _children_rows(self, path: str, depth: int) -> list[NodeT]:
        rows = [
            candidate
            for candidate in self.by_path.values()
            if candidate.depth == depth + 1 and candidate.path.startswith(path)
        ]
        rows.sort(key=_path_key)
        return rows

    def siblings(self, node: NodeT) -> list[NodeT]:
        """treebeard ``get_siblings``: the node and its siblings, by path."""
        if node.depth == 1:
            return self.roots()
        return self._children_rows(parent_path(node.path), node.depth - 1)

    def descendants(self, node: NodeT, *, include_self: bool = False) -> list[NodeT]:
        found = [
            candidate
            for candidate in self.by_path.values()
            if candidate.path.startswith(node.path) and (include_self or candidate.depth > node.depth)
        ]
        found.sort(key=_path_key)
        return found

    # --- adding --------------------------------------------------------------------------------

    def add_root(self, node: NodeT) -> None:
        roots = self.roots()
        node.path = _next_path(roots[-1].path) if roots else _step(1)
        node.depth = 1
        self._index(node)

    def add_child(self, parent: NodeT, node: NodeT) -> None:
        """treebeard ``add_child``; ``OrphanedParent`` where Docs fails (see the class)."""
        if self.is_leaf(parent):
            node.path = parent.path + _step(1)
        else:
            last_child = self._last(self._children_rows(parent.path, parent.depth))
            if last_child is None:
                raise OrphanedParent("the parent is not a leaf but has no child rows")
            node.path = _next_path(last_child.path)
        node.depth = parent.depth + 1
        parent.numchild += 1
        self._index(node)

    def add_last_sibling(self, sibling: NodeT, node: NodeT) -> None:
        """treebeard ``add_sibling("last-sibling")``: after the last sibling, the parent counts one more."""
        last = self._last(self.siblings(sibling)) or sibling
        node.path = _next_path(last.path)
        node.depth = sibling.depth
        parent = self.parent(sibling)
        if parent is not None:
            parent.numchild += 1
        self._index(node)

    def _index(self, node: NodeT) -> None:
        if node.path in self.by_path:
            raise RuntimeError(f"path {node.path} is already taken")  # an IntegrityError in Docs
        self.by_path[node.path] = node

    @staticmethod
    def _last(nodes: list[NodeT]) -> NodeT | None:
        return nodes[-1] if nodes else None

    # --- moving --------------------------------------------------------------------------------

    def move(self, node: NodeT, target: NodeT, position: str) -> None:
        """treebeard ``node.move(target, pos)``; ``InvalidMove`` into itself or its own subtree."""
        for statement in self._plan_move(node, target, position):
            if isinstance(statement, _Branch):
                self._move_branch(statement.old_prefix, statement.new_prefix)
            else:
                counted = self.by_path.get(statement.path)
                if counted is not None:
                    counted.numchild += statement.delta

    def _plan_move(self, node: NodeT, target: NodeT, position: str) -> list[_Branch | _ChildCount]:
        if position not in MOVE_POSITIONS:
            raise ValueError(f"unknown position {position!r}")
        old_path = node.path
        new_depth = target.depth
        new_position: int | None = None
        shift_candidates: list[NodeT] = []
        if position in _CHILD_POSITIONS:
            if target is node:
                raise InvalidMove("Can't move node to itself.")
            new_depth += 1
            if self.is_leaf(target):
                new_position, position = 1, "first-sibling"
            else:
                last_child = self._last(self._children_rows(target.path, target.depth))
                if last_child is None:
                    raise OrphanedParent("the target is not a leaf but has no child rows")
                target = last_child
                position = "first-sibling" if position == "first-child" else "last-sibling"
        if target.path.startswith(node.path) and target.depth > node.depth:
            raise InvalidMove("Can't move node to a descendant.")
        target_siblings = self.siblings(target)
        is_last = bool(target_siblings) and target_siblings[-1] is target
        is_first = bool(target_siblings) and target_siblings[0] is target
        if old_path == target.path and (
            position == "left"
            or (position in ("right", "last-sibling") and is_last)
            or (position == "first-sibling" and is_first)
        ):
            return []  # not actually moving

        statements: list[_Branch | _ChildCount] = []
        if position == "last-sibling" or (position == "right" and is_last):
            new_path = _next_path(target_siblings[-1].path)
            statements.append(_Branch(old_path, new_path))
        else:
            if new_position is None:
                if position == "left":
                    shift_candidates = [s for s in target_siblings if s.path >= target.path]
                elif position == "right":
                    shift_candidates = [s for s in target_siblings if s.path > target.path]
                else:
                    shift_candidates = list(target_siblings)
                base_number = _step_number(target.path[-STEP_LENGTH:])
                new_position = {"first-sibling": 1, "left": base_number, "right": base_number + 1}[position]
            new_path = _path_at(target.path, new_depth, new_position)
            temporary_path = None
            if len(old_path) == len(new_path):
                same_parent = parent_path(old_path) == new_path[: (new_depth - 1) * STEP_LENGTH]
                if same_parent and shift_candidates and new_path < old_path:
                    last_number = _step_number(target_siblings[-1].path[-STEP_LENGTH:])
                    temporary_path = _path_at(new_path, new_depth, last_number + 2)
                    statements.append(_Branch(old_path, temporary_path))
            to_shift: list[str] = []
            prior_path = new_path
            for sibling in shift_candidates:
                if sibling.path > prior_path:
                    break
                to_shift.append(sibling.path)
                prior_path = _next_path(sibling.path)
            for sibling_path in reversed(to_shift):
                shifted = _next_path(sibling_path)
                statements.append(_Branch(sibling_path, shifted))
                if old_path.startswith(sibling_path):
                    old_path = shifted + old_path[len(sibling_path) :]
            statements.append(_Branch(temporary_path or old_path, new_path))

        old_parent, new_parent = parent_path(old_path), parent_path(new_path)
        if old_parent != new_parent:
            if old_parent:
                statements.append(_ChildCount(old_parent, -1))
            if new_parent:
                statements.append(_ChildCount(new_parent, +1))
        return statements

    def _move_branch(self, old_prefix: str, new_prefix: str) -> None:
        moving = [node for path, node in self.by_path.items() if path.startswith(old_prefix)]
        for node in moving:
            del self.by_path[node.path]
        for node in moving:
            node.path = new_prefix + node.path[len(old_prefix) :]
            node.depth = len(node.path) // STEP_LENGTH
            self._index(node)

    # --- trash ---------------------------------------------------------------------------------

    def soft_delete(self, node: NodeT, now: datetime, stamp: str) -> None:
        """Docs ``soft_delete``: ``now`` marks it and hides its subtree; ``stamp`` is the new ``updated_at``."""
        if node.deleted_at is not None or node.ancestors_deleted_at is not None:
            raise RuntimeError("This document is already deleted or has deleted ancestors.")
        node.deleted_at = node.ancestors_deleted_at = now
        node.updated_at = stamp
        parent = self.parent(node)
        if parent is not None:
            parent.numchild -= 1
            parent.has_deleted_children = True
        for descendant in self.descendants(node):
            if descendant.ancestors_deleted_at is None:
                descendant.ancestors_deleted_at = now
                descendant.updated_at = stamp

    def restore(self, node: NodeT) -> None:
        """Docs ``restore`` (the caller checks the 30-day window): hidden again if an ancestor is trashed."""
        if node.deleted_at is None:
            raise RuntimeError("This document is not deleted.")
        own_deletion = node.deleted_at
        node.deleted_at = None
        trashed_ancestors = [a.deleted_at for a in self.ancestors(node) if a.deleted_at is not None]
        node.ancestors_deleted_at = min(trashed_ancestors) if trashed_ancestors else None
        for descendant in self.descendants(node):
            hidden_earlier = (
                descendant.ancestors_deleted_at is not None and descendant.ancestors_deleted_at < own_deletion
            )
            if descendant.deleted_at is None and not hidden_earlier:
                descendant.ancestors_deleted_at = node.ancestors_deleted_at
        parent = self.parent(node)
        if parent is not None:
            parent.numchild += 1


def _path_key(node: TreeNode) -> str:
    return node.path
