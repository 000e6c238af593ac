"""``presence.CursorPlaces``: cursors placed in their blocks from an index kept up to date by what changed.

``people()`` used to decode the whole document on every call; ``CursorPlaces`` decodes it once,
then only the updates made since its last look. These tests check that the index it keeps places
every item as a fresh decoding of the whole document does, after edits by two clients (text
typed in the middle, blocks inserted and deleted), and that a later look decodes only the change.
"""

from __future__ import annotations

from typing import Any

import pytest
from pycrdt import Doc

from elynav_nb.docs.blocknote import delete_block, insert_block, update_block_text
from elynav_nb.docs.live import _yjs_items
from elynav_nb.docs.live._yjs_items import ItemIndex, decode_items
from elynav_nb.docs.live.presence import CursorPlaces, cursor_after, people_from_states


def synced(doc: Doc[Any]) -> Doc[Any]:
    other: Doc[Any] = Doc()
    other.apply_update(doc.get_update())
    return other


def exchange(first: Doc[Any], second: Doc[Any]) -> None:
    first.apply_update(second.get_update(first.get_state()))
    second.apply_update(first.get_update(second.get_state()))


def places_of_every_item(index: ItemIndex, doc: Doc[Any]) -> dict[tuple[int, int], str | None]:
    return {
        (item.client, item.clock): index.block_of(item.client, item.clock)
        for item in decode_items(doc.get_update())
    }


def test_the_kept_index_places_every_item_as_a_fresh_decoding_does() -> None:
    agent: Doc[Any] = Doc()
    ids = [insert_block(agent, f"Paragraphe {number}") for number in range(40)]
    places = CursorPlaces(agent)
    places.index()  # the first look: the whole state
    person = synced(agent)
    update_block_text(person, ids[10], "Paragraphe 10, complété au milieu par une personne")
    new_block = insert_block(person, "Un bloc de la personne", after=ids[20])
    exchange(agent, person)
    update_block_text(agent, ids[30], "L'agent réécrit ce paragraphe")
    delete_block(agent, ids[5])
    insert_block(agent, "Un bloc de l'agent", after=new_block)
    exchange(agent, person)

    kept = places.index()
    fresh = ItemIndex(agent.get_update())
    assert places_of_every_item(kept, agent) == places_of_every_item(fresh, agent)
    assert any(place == new_block for place in places_of_every_item(kept, agent).values())


def test_a_later_look_decodes_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    doc: Doc[Any] = Doc()
    ids = [insert_block(doc, f"Paragraphe {number}") for number in range(200)]
    places = CursorPlaces(doc)
    decoded: list[int] = []
    real_decode = _yjs_items.decode_items
    monkeypatch.setattr(
        _yjs_items, "decode_items", lambda update: decoded.append(len(update)) or real_decode(update)
    )
    places.index()
    places.index()  # nothing changed
    update_block_text(doc, ids[100], "Paragraphe 100 modifié")
    index = places.index()
    whole, unchanged, after_edit = decoded
    assert unchanged < 100 and after_edit < whole / 20, decoded

    character = _yjs_items.last_text_character(doc.get_update(), doc.client_id)
    assert character is not None
    people = people_from_states({7: {"user": {"name": "Alice"}, "cursor": cursor_after(character)}}, index)
    assert [person.block_id for person in people] == [ids[100]]
