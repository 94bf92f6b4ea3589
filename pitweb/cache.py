"""The shared cache, for speed only: when Redis cannot be reached, each process keeps
going on a small cache of its own, so an outage makes pages slower, never failed.

What lives in the cache may be lost at any time and the site stays right: cached boards
are keyed by the board version (a database row), so a process's own copy is never
stale; a throttle's history falls back to the process (each process then counts on its
own: a limit holds per process until Redis is back, never not at all).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
# how often an outage is logged (once per interval per process, not per request)
LOG_EVERY = 30.0
LOCAL_ENTRIES = 300


class ForgivingRedisCache(RedisCache):
    """Django's Redis cache, falling back to a per-process memory cache on any Redis
    error (refused, reset, timed out, out of memory)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._local = LocMemCache(
            f"fallback-{id(self)}", {"OPTIONS": {"MAX_ENTRIES": LOCAL_ENTRIES}}
        )
        self._logged = 0.0

    def _either(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(super(), name)(*args, **kwargs)
        except RedisError as exc:
            now = time.monotonic()
            if now - self._logged > LOG_EVERY:
                self._logged = now
                log.warning(
                    "cache unreachable (%s: %s); serving from memory", type(exc).__name__, exc
                )
            return getattr(self._local, name)(*args, **kwargs)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("add", *args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get", *args, **kwargs)

    def set(self, *args: Any, **kwargs: Any) -> None:
        self._either("set", *args, **kwargs)

    def touch(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("touch", *args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete", *args, **kwargs)

    def get_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get_many", *args, **kwargs)

    def has_key(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("has_key", *args, **kwargs)

    def incr(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("incr", *args, **kwargs)

    def set_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("set_many", *args, **kwargs)

    def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete_many", *args, **kwargs)

    def clear(self) -> None:
        self._local.clear()
        self._either("clear")
