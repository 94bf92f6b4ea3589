"""The servers a few tests start or reach themselves rather than through the site's
settings: a Redis of their own (the cache's outages), and the Postgres and Redis the
deployment's environment names. Where one is missing the test is skipped, saying what it
needs; in CI it fails instead (.ci/run installs and starts them)."""

from __future__ import annotations

import os
import shutil
import socket
from typing import NoReturn

import pytest


def missing(message: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test, but it {message}")
    pytest.skip(message)


def redis_server() -> str:
    """The redis-server program, for a test that starts a Redis of its own."""
    binary = shutil.which("redis-server")
    if binary is None:
        missing("needs redis-server on PATH (the Debian package redis-server)")
    return binary


def require_listening(host: str, port: int, what: str) -> None:
    """Skip unless ``what`` answers at ``host:port``."""
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as exc:
        missing(f"needs {what} listening at {host}:{port} ({exc.strerror or exc})")
