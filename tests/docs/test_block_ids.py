"""Block ids are UUID v4 strings, never repeated, not even between a process and its fork."""

from __future__ import annotations

import os
import sys
import uuid
import warnings

import pytest

from elynav_nb.docs.blocknote._ids import new_block_id


def test_ids_are_lowercase_uuid4_strings_and_unique() -> None:
    ids = [new_block_id() for _ in range(5000)]  # several pool refills
    assert len(set(ids)) == len(ids)
    for block_id in ids[:300]:
        parsed = uuid.UUID(block_id)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == block_id


@pytest.mark.skipif(sys.platform == "win32", reason="needs os.fork")
def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    new_block_id()  # the parent holds a pool with ids left in it
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "fork() in a multi-threaded process"
        pid = os.fork()
    if pid == 0:  # the child: write its next ids, leave at once
        os.close(reader)
        os.write(writer, ",".join(new_block_id() for _ in range(20)).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        child_ids = set(pipe.read().split(","))
    os.waitpid(pid, 0)
    parent_ids = {new_block_id() for _ in range(20)}
    assert len(child_ids) == 20 and not child_ids & parent_ids
