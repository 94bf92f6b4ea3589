"""The cache serves the site, not the visitor: random query strings add no cache entry,
a cache that is down means slower pages and not failed ones, and the deployment gives
the cache a bounded Redis of its own while the broker never evicts."""

from __future__ import annotations

import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run, token_client
from tests.support.servers import redis_server

pytestmark = pytest.mark.django_db(transaction=True)
REPO = Path(__file__).resolve().parents[3]


def entries() -> int:
    """How many entries the site's cache holds, whichever store it is."""
    from django.conf import settings
    from django.db import connection

    found = settings.CACHES["default"]
    if found["BACKEND"].endswith("DatabaseCache"):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {found['LOCATION']}")
            return int(cursor.fetchone()[0])
    return int(redis.Redis.from_url(found["LOCATION"]).dbsize())


def hostile_queries(count: int) -> Iterator[str]:
    for n in range(count):
        token = secrets.token_hex(6)
        yield [
            f"?{token}={token}",
            f"?release={token}",
            f"?form={token}",
            f"?start=2023-0{1 + n % 9}-1{n % 10}",
            f"?page={1000 + n}",
            f"?release=&form=&x={token}",
            f"?isolated={token}&utm_source={token}",
        ][n % 7]


def test_random_query_strings_add_no_cache_entry(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    board = f"/benchmarks/{run.benchmark.key}/"  # type: ignore[union-attr]
    client = Client()
    # the board's own queries are cached; the first visit of a filtered board computes
    # it (a new stamp), so the second round settles every entry at the last stamp
    for _ in range(2):
        for path in (board, "/api/leaderboard/"):
            assert client.get(path).status_code == 200
            assert client.get(f"{path}?release={run.release.name}").status_code == 200
    settled = entries()
    statuses = set()
    for query in hostile_queries(140):
        for path in (board, "/api/leaderboard/"):
            statuses.add(client.get(path + query).status_code)
    assert statuses <= {200, 400}
    assert entries() == settled  # 280 anonymous requests, not one entry more
    # the same board reached with parameters it does not read is the same entry
    assert client.get(f"{board}?release={run.release.name}&utm_source=x").status_code == 200
    assert entries() == settled


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _redis_server(port: int, *args: str) -> subprocess.Popen[bytes]:
    binary = redis_server()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            return server
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                server.kill()
                raise
            time.sleep(0.05)


@pytest.fixture()
def own_cache(settings: Any) -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """The site's cache on a Redis of its own, which the test may stop and start."""
    port = _free_port()
    servers = [_redis_server(port)]
    settings.CACHES = {
        "default": {
            **settings.CACHES["default"],
            "BACKEND": "pitweb.cache.ForgivingRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.5},
        }
    }
    try:
        yield port, servers
    finally:
        for server in servers:
            server.kill()
            server.wait()


def test_a_cache_that_is_down_slows_pages_and_never_fails_them(
    own_cache: tuple[int, list[subprocess.Popen[bytes]]],
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
) -> None:
    port, servers = own_cache
    run = submit_run(submitter, stub_run)
    client = Client()
    pages = ["/", "/api/leaderboard/", f"/runs/{run.body_sha256}/", "/status/", "/leaderboard.csv"]
    for page in pages:
        assert client.get(page, follow=True).status_code == 200, page
    assert redis.Redis(port=port).dbsize() > 0  # the boards went to the cache
    servers[0].kill()
    servers[0].wait()
    for page in pages:  # the cache is gone: served all the same
        assert client.get(page, follow=True).status_code == 200, page
        assert client.get(page, follow=True).status_code == 200, page  # the process's copy
    files = picky_run.files()
    response = token_client(submitter).post(
        "/api/runs/",
        {"receipt": files["receipt"], "trajectory": files["trajectory"], "prices": files["prices"]},
        format="multipart",
    )
    assert response.status_code == 201, response.content  # an upload goes through too
    assert Run.objects.count() == 2
    body = client.get("/api/leaderboard/").content.decode()
    assert response.json()["body_sha256"] in body  # and the board is not stale
    servers.append(_redis_server(port))  # back: the cache is used again
    cache.clear()
    assert client.get("/benchmarks/", follow=True).status_code == 200
    assert redis.Redis(port=port).dbsize() > 0


def test_the_cache_keeps_one_client_per_pool_across_an_outage(
    own_cache: tuple[int, list[subprocess.Popen[bytes]]],
) -> None:
    from django.core.cache import caches

    port, servers = own_cache
    backend = caches["default"]
    client = backend._cache.get_client()
    assert backend._cache.get_client(write=True) is client  # not one built per operation
    backend.set("k", 1)
    servers[0].kill()
    servers[0].wait()
    assert backend.get("k") is None  # Redis gone: the process's own cache answers
    servers.append(_redis_server(port))
    backend.set("k", 2)  # back: the same client reconnects through its pool
    assert backend.get("k") == 2 and redis.Redis(port=port).get(backend.make_key("k"))
    assert backend._cache.get_client() is client


def test_the_upload_throttle_still_limits_while_the_cache_is_down(
    own_cache: tuple[int, list[subprocess.Popen[bytes]]],
    submitter: User,
    stub_run: Artifacts,
    settings: Any,
) -> None:
    _, servers = own_cache
    servers[0].kill()
    servers[0].wait()
    from rest_framework.settings import api_settings
    from rest_framework.throttling import SimpleRateThrottle

    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "uploads": "2/hour"}
    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = rates
    try:
        client = token_client(submitter)
        statuses = [client.post("/api/runs/", {}, format="multipart").status_code for _ in range(4)]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = original
    # two refused as empty, then throttled: the limit is counted in the process meanwhile
    assert all(s < 500 and s != 429 for s in statuses[:2]) and statuses[2:] == [429, 429]


def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def test_the_deployment_gives_the_cache_a_bounded_redis_and_the_broker_never_evicts() -> None:
    services = compose()["services"]
    broker, store = services["redis"]["command"], services["cache"]["command"]
    assert broker[broker.index("--maxmemory-policy") + 1] == "noeviction"
    assert "--maxmemory" not in broker
    assert store[store.index("--maxmemory-policy") + 1] == "allkeys-lru"
    for name in ("web", "worker", "beat"):
        environment = services[name]["environment"]
        assert environment["PITWEB_CACHE_URL"].startswith("redis://cache:"), name
    # the cache's command as compose runs it, on a real Redis: accepted and in force
    port = _free_port()
    args = [a for a in store[1:] if a not in ("--save", "", "--appendonly", "no")]
    server = _redis_server(port, *args)
    try:
        client = redis.Redis(port=port)
        assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "allkeys-lru"
        assert int(client.config_get("maxmemory")["maxmemory"]) == 256 * 1024 * 1024
        client.config_set("maxmemory", str(2 * 1024 * 1024))  # small enough to fill here
        for n in range(400):  # 8 MB written into a 2 MB cache: old keys go, writes succeed
            client.set(f"board:{n}", secrets.token_bytes(20_000))
        assert int(client.info("memory")["used_memory"]) <= 3 * 1024 * 1024
        assert client.dbsize() < 400
    finally:
        server.kill()
        server.wait()
