"""Docs' document throttle, as Django REST framework counts it: 80 requests a minute per user.

Where it sits: the sandbox's REST routes (``server.route``) and its collaboration gate (the
backend check the y-provider makes on every WebSocket connect) charge the same ``UserThrottle``,
so the tests see what a real instance does: one bucket per user, shared by every client of that
user (scripts, browser tabs, the y-provider's own ``GET /documents/<id>/`` with the user's cookie).

Facts (Docs 5.4.1 ``core/api/throttling.py`` ``DocumentThrottle``, a ``ScopedRateThrottle`` with
scope ``document`` and rate ``API_DOCUMENT_THROTTLE_RATE`` = ``80/minute``; DRF 3.17
``SimpleRateThrottle``): the key is the user's id (the client's address when anonymous); a request
is allowed while fewer than ``rate`` requests were allowed in the last ``period`` seconds, and is
then recorded; a refused one is not recorded. The 429 says ``Retry-After: ceil(wait)`` and
``{"detail": "Request was throttled. Expected available in N seconds."}`` where ``wait`` is the
period minus the age of the oldest recorded request (when the next slot frees), so at most a minute.

Docs exempts requests carrying its own ``X-Y-Provider-Key`` (since 4.2.0). The instance checked
live answered its y-provider's calls from the user's bucket all the same (its two keys differ, or
Django's is unset), which is what this sandbox does by default (``collaboration_exempt=False``).
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque
from typing import Final

__all__ = ["THROTTLE_SCOPE", "UserThrottle", "throttled_detail"]

THROTTLE_SCOPE: Final = "document"


def throttled_detail(wait: int) -> str:
    """DRF's ``Throttled`` text for a wait of ``wait`` seconds."""
    unit = "second" if wait == 1 else "seconds"
    return f"Request was throttled. Expected available in {wait} {unit}."


class UserThrottle:
    """``rate`` requests per ``period`` seconds and per key; ``check`` records an allowed request."""

    def __init__(self, rate: int = 80, period: float = 60.0) -> None:
        self.rate = rate
        self.period = period
        self._history: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.refused = 0

    def check(self, key: str) -> int | None:
        """``None`` when allowed (and recorded); else the ``Retry-After`` seconds (refused, not recorded)."""
        with self._lock:
            now = time.monotonic()
            history = self._history[key]
            while history and history[0] <= now - self.period:
                history.popleft()
            if len(history) < self.rate:
                history.append(now)
                return None
            self.refused += 1
            remaining = self.period - (now - history[0]) if history else self.period
            available = self.rate - len(history) + 1
            return max(1, math.ceil(remaining / available))

    def reset(self) -> None:
        with self._lock:
            self._history.clear()
