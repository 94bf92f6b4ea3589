"""The shared cache, for speed only: when Redis cannot be reached, each process keeps
going on a small cache of its own, so an outage makes pages slower, never failed. And
``near``: each process's own copies of answers that never change under their key.

With no Redis the cache is a table of the database (``SharedDatabaseCache``): the one
store every process shares.

What lives in the cache may be lost at any time and the site stays right: cached boards
are keyed by the board version (a database row), so a process's own copy is never
stale; a throttle's history falls back to the process (each process then counts on its
own: a limit holds per process until Redis is back, never not at all).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Any

from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.db import connections, router, transaction
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
# how often an outage is logged (once per interval per process, not per request)
LOG_EVERY = 30.0
LOCAL_ENTRIES = 300


class Near:
    """This process's copies of answers that never change under their key (a cached
    board's key carries the board's stamp): a read that finds one makes no round trip to
    the shared cache. Each copy is kept until its own deadline (the one its shared entry
    has), within ``max_bytes`` (least recently read dropped first); only text and bytes
    are kept, each at most a quarter of the bound. Shared by the process's threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[float, str | bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            if found[0] <= time.time():
                self._drop(key)
                return None
            self._items.move_to_end(key)
            return found[1]

    def put(self, key: str, value: Any, until: float) -> None:
        if not isinstance(value, str | bytes) or len(value) > self.max_bytes // 4:
            return
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._items[key] = (until, value)
            self._bytes += len(value)
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._items)))

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def _drop(self, key: str) -> None:
        self._bytes -= len(self._items.pop(key)[1])


NEAR_BYTES = 32 * 1024 * 1024
near = Near(NEAR_BYTES)


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
        near.clear()  # what was cleared is read from the source again, here too
        self._local.clear()
        self._either("clear")


class SharedDatabaseCache(DatabaseCache):
    """Django's database cache, whose ``incr`` loses no count when two processes add at
    once (a sign-in failure counted by two server processes): Django's reads and then
    writes, so both could read 4 and write 5. Here the read and the write are one
    transaction that holds the entry: on SQLite a transaction takes the database's write
    lock as it begins (settings: transaction_mode IMMEDIATE), on Postgres the entry's row
    is locked before it is read (SELECT ... FOR UPDATE)."""

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        alias = router.db_for_write(self.cache_model_class)
        connection = connections[alias]
        with transaction.atomic(using=alias):
            if connection.features.has_select_for_update:
                table, column = (
                    connection.ops.quote_name(n)
                    for n in (self.cache_model_class._meta.db_table, "cache_key")
                )
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"SELECT {column} FROM {table} WHERE {column} = %s FOR UPDATE",
                        [self.make_and_validate_key(key, version=version)],
                    )
            return super().incr(key, delta, version)
