"""The site's cache costs what its backend costs, whichever it is: no query on Redis,
the counts of tests/support/queries.py on the database cache (no REDIS_URL)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache

from tests.support.queries import cache_cost, database_cache, queries_apart

pytestmark = pytest.mark.django_db


def test_each_cache_operation_costs_what_its_backend_costs() -> None:
    with queries_apart() as spent:  # on leaving, each operation's queries are checked
        cache.set("k", 1)
        assert cache.add("k", 2) is False
        assert cache.get("k") == 1
        assert cache.get_many(["k", "missing"]) == {"k": 1}
        assert cache.has_key("k")
        assert cache.incr("k") == 2
        cache.touch("k", 60)
        cache.delete("k")
    assert spent.site == []
    assert [c.operation for c in spent.calls] == [
        "set", "add", "get", "get_many", "has_key", "incr", "touch", "delete",
    ]  # fmt: skip
    made = sum(len(c.made) for c in spent.calls)
    assert made >= sum(cache_cost(c.operation) for c in spent.calls)
    assert (made > 0) is database_cache()


def test_the_site_s_queries_inside_a_block_are_counted_apart_from_the_cache_s() -> None:
    with queries_apart() as spent:
        cache.get("k")
        User.objects.count()
        cache.set("k", 1)
    assert len(spent.site) == 1 and "auth_user" in spent.site[0]
