"""A rate limit shared by the threads of one answer or judge run: calls start at most
``per_minute`` times a minute, evenly spaced (a provider's per-minute quota is kept
without bursts that a 429 would answer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Pace:
    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("a pace is a positive number of calls per minute")
        self.interval = 60.0 / per_minute
        self._clock, self._sleep = clock, sleep
        self._next: float | None = None
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Return when the next call may start (each caller takes the next free slot)."""
        with self._lock:
            now = self._clock()
            slot = now if self._next is None else max(self._next, now)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)
