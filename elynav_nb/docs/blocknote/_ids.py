"""New BlockNote block ids: random UUID v4 strings, from a pooled random source.

Where it sits: a helper of the document model (``blocknote.py`` names every block it creates). No
I/O besides the operating system's random source.

``uuid.uuid4()`` asks the kernel for 16 random bytes on every call; one system call per block is
a measurable share of an acknowledged insert (design note §5: ids are UUID v4). Here the bytes are
drawn 4 KiB at a time, as Node's ``crypto.randomUUID`` does, under a lock (threads never share
bytes), and a forked child throws its parent's pool away (parent and child never share ids).
"""

from __future__ import annotations

import os
import threading
from typing import Final

__all__ = ["new_block_id"]

_IDS_PER_DRAW: Final = 256
_lock = threading.Lock()
_pool = b""
_position = 0


def new_block_id() -> str:
    """A new random UUID v4, as the lowercase hyphenated string BlockNote stores."""
    global _pool, _position
    with _lock:
        if _position >= len(_pool):
            _pool = os.urandom(16 * _IDS_PER_DRAW)
            _position = 0
        random_bytes = bytearray(_pool[_position : _position + 16])
        _position += 16
    random_bytes[6] = random_bytes[6] & 0x0F | 0x40  # version 4
    random_bytes[8] = random_bytes[8] & 0x3F | 0x80  # RFC 4122 variant
    hex_digits = random_bytes.hex()
    return f"{hex_digits[:8]}-{hex_digits[8:12]}-{hex_digits[12:16]}-{hex_digits[16:20]}-{hex_digits[20:]}"


def _forget_pool() -> None:
    global _pool, _position
    _pool, _position = b"", 0


os.register_at_fork(after_in_child=_forget_pool)
