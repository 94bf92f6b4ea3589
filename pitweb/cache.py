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
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
# how often an outage is logged (once per interval per process, not per request)
LOG_EVERY = 30.0
LOCAL_ENTRIES = 300


class _OneClientPerPool(RedisCacheClient):
    """Django's Redis client, keeping one ``redis.Redis`` per connection pool: Django
    builds a new one for every operation, a third of a cached page's cache read. A
    client holds no connection of its own (it borrows one from the pool per command),
    so one is shared safely by every thread that uses the pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own get_client, less the new client: its private names are untyped
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            new = self._client  # type: ignore[attr-defined]
            client = self._clients[id(pool)] = new(connection_pool=pool)
        return client


class ForgivingRedisCache(RedisCache):
    """Django's Redis cache, falling back to a per-process memory cache on any Redis
    error (refused, reset, timed out, out of memory)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _OneClientPerPool
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
