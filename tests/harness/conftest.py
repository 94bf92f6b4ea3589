"""Fixtures the harness's tests share: the loopback chat server (agent and judge) and a
loopback model provider over HTTPS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.chat_server import Chat, serving
from tests.support.model_server import serving_model


@pytest.fixture()
def server() -> Iterator[tuple[Chat, str]]:
    """A chat-completions server on loopback playing agent and judge, and its base URL."""
    with serving() as running:
        yield running


@pytest.fixture()
def model(tmp_path: Path) -> Iterator[tuple[int, Path, list[dict[str, Any]]]]:
    """A loopback chat-completions server over HTTPS: (port, its certificate, requests)."""
    with serving_model(tmp_path) as running:
        yield running
