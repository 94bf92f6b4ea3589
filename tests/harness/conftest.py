"""Fixtures the harness's judged-point tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness.chat_server import Chat, serving


@pytest.fixture()
def server() -> Iterator[tuple[Chat, str]]:
    """A chat-completions server on loopback playing agent and judge, and its base URL."""
    with serving() as running:
        yield running
