"""The sandbox's materialised-path tree (Docs on django-treebeard): paths, moves, trash, restore.

The path arithmetic was checked step by step against the real django-treebeard 4.8.0 (Docs'
alphabet, step length and leaf rule); these tests pin the behaviour in this repository: exact
paths for the documented cases, and a property test against a plain ordered-children model.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elynav_nb.sandbox.docs.tree import (
    MOVE_POSITIONS,
    InvalidMove,
    MaterializedPathTree,
    OrphanedParent,
    filter_root_paths,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(eq=False)
class Node:
    name: str
    path: str = ""
    depth: int = 1
    numchild: int = 0
    has_deleted_children: bool = False
    deleted_at: datetime | None = None
    ancestors_deleted_at: datetime | None = None
    updated_at: str = ""


def roots(tree: MaterializedPathTree[Node], *names: str) -> list[Node]:
    made = []
    for name in names:
        node = Node(name)
        tree.add_root(node)
        made.append(node)
    return made


def children(tree: MaterializedPathTree[Node], parent: Node, *names: str) -> list[Node]:
    made = []
    for name in names:
        node = Node(name)
        tree.add_child(parent, node)
        made.append(node)
    return made


def names(nodes: list[Node]) -> list[str]:
    return [node.name for node in nodes]


def test_paths_are_base_62_steps_of_seven_characters() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    many = roots(tree, *(f"r{number}" for number in range(1, 64)))
    assert many[0].path == "0000001"
    assert [many[8].path, many[9].path, many[35].path, many[36].path] == [
        "0000009",
        "000000A",
        "000000a",
        "000000b",
    ]
    assert (many[61].path, many[62].path) == ("0000010", "0000011")  # 62 = 1 * 62 + 0, then + 1
    (child,) = children(tree, many[0], "c")
    (grandchild,) = children(tree, child, "g")
    assert (child.path, child.depth, grandchild.path, grandchild.depth) == (
        "00000010000001",
        2,
        "000000100000010000001",
        3,
    )
    assert many[0].numchild == 1 and tree.roots()[:2] == many[:2]


def test_a_new_child_never_takes_the_path_of_a_trashed_one() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (parent,) = roots(tree, "p")
    (only,) = children(tree, parent, "only")
    tree.soft_delete(only, T0, "t0")
    assert (parent.numchild, parent.has_deleted_children, tree.is_leaf(parent)) == (0, True, False)
    (second,) = children(tree, parent, "second")
    assert second.path == "00000010000002"  # after the trashed row, not 0000001 again


def test_the_orphaned_parent_fails_like_docs() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    parent, other = roots(tree, "p", "q")
    (child,) = children(tree, parent, "c")
    tree.soft_delete(child, T0, "t0")
    tree.restore(child)
    tree.move(child, other, "last-child")
    with pytest.raises(OrphanedParent):
        children(tree, parent, "new")
    with pytest.raises(OrphanedParent):
        tree.move(child, parent, "first-child")


@pytest.mark.parametrize(
    ("position", "target", "expected"),
    [
        ("first-child", "b", ["a", "b", "c"]),  # under b: b's children then
        ("last-child", "b", ["a", "b", "c"]),
        ("first-sibling", "c", ["x", "a", "b", "c"]),
        ("last-sibling", "a", ["a", "b", "c", "x"]),
        ("left", "b", ["a", "x", "b", "c"]),
        ("right", "b", ["a", "b", "x", "c"]),
        ("right", "c", ["a", "b", "c", "x"]),
        ("left", "a", ["x", "a", "b", "c"]),
    ],
)
def test_the_six_positions_place_the_document_where_docs_does(
    position: str, target: str, expected: list[str]
) -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (top, elsewhere) = roots(tree, "top", "elsewhere")
    siblings = {node.name: node for node in children(tree, top, "a", "b", "c")}
    (moving,) = children(tree, elsewhere, "x")
    (inside,) = children(tree, siblings["b"], "b1")
    tree.move(moving, siblings[target], position)
    if position in ("first-child", "last-child"):
        under_b = names(tree.children(siblings["b"]))
        assert under_b == (["x", "b1"] if position == "first-child" else ["b1", "x"])
        assert siblings["b"].numchild == 2
    else:
        assert names(tree.children(top)) == expected
        assert top.numchild == 4
    assert elsewhere.numchild == 0 and moving.depth == moving.path.__len__() // 7
    assert inside.path.startswith(siblings["b"].path)


def test_moving_left_among_siblings_keeps_every_subtree_whole() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (top,) = roots(tree, "top")
    a, b, c = children(tree, top, "a", "b", "c")
    (c1,) = children(tree, c, "c1")
    (a1,) = children(tree, a, "a1")
    tree.move(c, a, "left")  # the temporary path trick of treebeard
    assert names(tree.children(top)) == ["c", "a", "b"]
    assert [c.path, a.path, b.path] == ["00000010000001", "00000010000002", "00000010000003"]
    assert c1.path == c.path + "0000001" and a1.path == a.path + "0000001"
    assert top.numchild == 3


def test_a_document_cannot_go_under_itself_or_its_descendants() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (top,) = roots(tree, "top")
    (child,) = children(tree, top, "child")
    (grandchild,) = children(tree, child, "grandchild")
    for target, position in [
        (top, "first-child"),
        (child, "last-child"),
        (grandchild, "left"),
        (grandchild, "last-child"),
    ]:
        with pytest.raises(InvalidMove):
            tree.move(top, target, position)
    assert (top.path, child.path, grandchild.path) == ("0000001", "00000010000001", "000000100000010000001")


def test_soft_delete_hides_the_subtree_and_restore_follows_docs_rules() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (parent,) = roots(tree, "parent")
    child, sibling = children(tree, parent, "child", "sibling")
    (grandchild,) = children(tree, child, "grandchild")
    tree.soft_delete(child, T0, "t0")
    assert (child.deleted_at, child.ancestors_deleted_at, grandchild.ancestors_deleted_at) == (T0, T0, T0)
    assert grandchild.deleted_at is None and grandchild.updated_at == "t0"
    later = T0 + timedelta(hours=1)
    tree.soft_delete(parent, later, "t1")  # the parent after its child
    assert sibling.ancestors_deleted_at == later and grandchild.ancestors_deleted_at == T0
    with pytest.raises(RuntimeError):
        tree.soft_delete(sibling, later, "t1")  # already hidden
    tree.restore(child)  # restored while the parent is still in the trash: hidden by the parent now
    assert (child.deleted_at, child.ancestors_deleted_at, grandchild.ancestors_deleted_at) == (
        None,
        later,
        later,
    )
    tree.restore(parent)  # everything comes back
    assert [n.ancestors_deleted_at for n in (parent, child, sibling, grandchild)] == [None] * 4
    assert parent.numchild == 2 and parent.has_deleted_children


def test_restore_keeps_a_descendant_hidden_by_its_own_earlier_deletion() -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    (top,) = roots(tree, "top")
    (child,) = children(tree, top, "child")
    (grandchild,) = children(tree, child, "grandchild")
    tree.soft_delete(grandchild, T0, "t0")
    tree.soft_delete(child, T0 + timedelta(minutes=1), "t1")
    tree.restore(child)
    assert child.ancestors_deleted_at is None
    assert (grandchild.deleted_at, grandchild.ancestors_deleted_at) == (T0, T0)


def test_filter_root_paths_keeps_the_highest_documents() -> None:
    paths = sorted(["0000001", "00000010000001", "0000002", "000000200000010000001", "0000003"])
    assert filter_root_paths(paths) == ["0000001", "0000002", "0000003"]
    assert filter_root_paths(["00000010000001", "00000010000002"]) == ["00000010000001", "00000010000002"]


# --- property: the paths always encode the order a plain ordered-children model gives ---------------


class OrderedModel:
    """The same tree as lists of children in order (what the six positions mean)."""

    def __init__(self) -> None:
        self.children: dict[str | None, list[str]] = {None: []}
        self.parent: dict[str, str | None] = {}

    def add(self, name: str, parent: str | None) -> None:
        self.children[parent].append(name)
        self.children[name] = []
        self.parent[name] = parent

    def is_under(self, name: str, ancestor: str) -> bool:
        current: str | None = name
        while current is not None:
            if current == ancestor:
                return True
            current = self.parent[current]
        return False

    def move(self, name: str, target: str, position: str) -> None:
        if name == target and position in ("left", "right"):
            return  # beside itself: the order does not change
        self.children[self.parent[name]].remove(name)
        if position in ("first-child", "last-child"):
            new_parent: str | None = target
            index = 0 if position == "first-child" else len(self.children[target])
        else:
            new_parent = self.parent[target]
            siblings = self.children[new_parent]
            if position == "first-sibling":
                index = 0
            elif position == "last-sibling":
                index = len(siblings)
            else:
                index = siblings.index(target) + (1 if position == "right" else 0)
        self.children[new_parent].insert(index, name)
        self.parent[name] = new_parent


operations = st.lists(
    st.tuples(
        st.sampled_from(["root", "child", "move", "move", "move"]),
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.sampled_from(MOVE_POSITIONS),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_paths_order_documents_as_the_positions_say(steps: list[tuple[str, int, int, str]]) -> None:
    tree: MaterializedPathTree[Node] = MaterializedPathTree()
    model = OrderedModel()
    nodes: dict[str, Node] = {}
    for number, (kind, first, second, position) in enumerate(steps):
        name = f"d{number}"
        if kind == "root" or not nodes:
            nodes[name] = Node(name)
            tree.add_root(nodes[name])
            model.add(name, None)
            continue
        keys = sorted(nodes)
        if kind == "child":
            parent = keys[first % len(keys)]
            nodes[name] = Node(name)
            tree.add_child(nodes[parent], nodes[name])
            model.add(name, parent)
            continue
        moving, target = keys[first % len(keys)], keys[second % len(keys)]
        refused = model.is_under(target, moving) and (
            target != moving or position in ("first-child", "last-child")
        )
        if refused:
            with pytest.raises(InvalidMove):
                tree.move(nodes[moving], nodes[target], position)
            continue
        tree.move(nodes[moving], nodes[target], position)
        model.move(moving, target, position)
    assert names(tree.roots()) == model.children[None]
    for name, node in nodes.items():
        assert names(tree.children(node)) == model.children[name]
        assert node.numchild == len(model.children[name])
        assert node.depth == len(node.path) // 7
    assert len({node.path for node in nodes.values()}) == len(nodes)
