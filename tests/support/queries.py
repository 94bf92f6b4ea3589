"""A request's own queries told apart from its cache's.

Without REDIS_URL the site's cache is a database table (pitweb.cache.SharedDatabaseCache),
so each cache read or write is a query too. A test that says what a page costs counts the
site's own queries (the same on every backend) apart from the cache's, and the cache's
are checked against what its backend costs (``cache_cost``): no query on Redis, the table
below on the database cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

# What one operation of the database cache costs: its statements on the cache's table,
# in a test whose cache was cleared (no expired entry to delete on the way, nothing to
# cull). A read is one SELECT; a write is a COUNT (whether to cull), the key's SELECT and
# its INSERT or UPDATE (an `add` that finds the key still tries its INSERT, which the
# key's uniqueness refuses); a delete is one DELETE. `incr` (pitweb.cache.
# SharedDatabaseCache) is a read and a write, the entry's row locked first where the
# database locks rows. A write also runs in a transaction of its own (a savepoint inside
# another): two or three statements more, BEGIN ... COMMIT or ROLLBACK.
DATABASE_CACHE_COST = {
    "get": 1,
    "get_many": 1,
    "has_key": 1,
    "add": 3,
    "set": 3,
    "touch": 3,
    "incr": 1 + 3,
    "decr": 1 + 3,
    "delete": 1,
    "delete_many": 1,
    "clear": 1,
}
# what a statement of the cache's own transaction looks like (BEGIN IMMEDIATE on SQLite)
TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


def database_cache() -> bool:
    """Whether the site's cache is the database's table (no REDIS_URL)."""
    return str(settings.CACHES["default"]["BACKEND"]).endswith("DatabaseCache")


def cache_cost(operation: str) -> int:
    """The statements one cache operation makes on its table, on the backend in use."""
    if not database_cache():
        return 0
    locks = operation in ("incr", "decr") and connection.features.has_select_for_update
    return DATABASE_CACHE_COST[operation] + int(locks)


@dataclass
class Call:
    """One cache operation, what it was given (a key, keys, or nothing), and the queries
    it made (their places among the block's)."""

    operation: str
    given: Any
    made: range = range(0)


@dataclass
class Spent:
    """What a block cost: the site's own queries and the cache's operations."""

    site: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def reads(self) -> list[Any]:
        """What the cache reads (``get``, ``get_many``) were given, in order."""
        return [c.given for c in self.calls if c.operation in ("get", "get_many")]


@contextmanager
def queries_apart() -> Iterator[Spent]:
    """Count the queries made inside the block, each to the site or to the cache operation
    that made it; on leaving, check that every operation cost what its backend costs and
    that the cache's queries touched only its table (or were its own transaction)."""
    backend = caches["default"]
    spent = Spent()
    inside = threading.local()
    with CaptureQueriesContext(connection) as captured:

        def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
            def counted(*args: Any, **kwargs: Any) -> Any:
                if getattr(inside, "call", None):  # made of others (get of get_many): one
                    return method(*args, **kwargs)
                inside.call = call = Call(name, args[0] if args else None)
                start = len(captured.captured_queries)
                try:
                    return method(*args, **kwargs)
                finally:
                    inside.call = None
                    call.made = range(start, len(captured.captured_queries))
                    spent.calls.append(call)

            return counted

        names = [n for n in DATABASE_CACHE_COST if hasattr(backend, n)]
        for name in names:
            setattr(backend, name, wrap(name, getattr(backend, name)))
        try:
            yield spent
        finally:
            for name in names:
                delattr(backend, name)
    spent.queries = [q["sql"] for q in captured.captured_queries]
    cached = {n for c in spent.calls for n in c.made}
    spent.site = [sql for n, sql in enumerate(spent.queries) if n not in cached]
    _check(spent)


def _check(spent: Spent) -> None:
    cache = settings.CACHES["default"]
    for call in spent.calls:
        made = [spent.queries[n] for n in call.made]
        on_table = [sql for sql in made if not sql.startswith(TRANSACTION)]
        assert len(on_table) == cache_cost(call.operation), (
            f"cache {call.operation}({call.given!r}) made {len(on_table)} queries on its "
            f"table, {cache_cost(call.operation)} on {cache['BACKEND']}",
            made,
        )
        assert all(str(cache.get("LOCATION")) in sql for sql in on_table), made
