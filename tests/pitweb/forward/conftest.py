"""The forward track's fixtures: an agent package registered for the submitter (a script
of its own, so a test can change it), and an HTTP agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness import canonical
from pitweb.execution import services as execution_services
from pitweb.execution.models import RegisteredAgent

AGENT = "import sys\nfor line in sys.stdin:\n    pass\n"
BENCH: dict[str, Any] = {
    "forms": ["8-K"], "hold_sessions": 5, "clocks": ["pit"], "arms": ["main", "shifted"],
}  # fmt: skip
ENDPOINT = "https://agents.example.com/mine"


@pytest.fixture()
def script(settings: Any, tmp_path: Path) -> Path:
    path = tmp_path / "waiter.py"
    path.write_text(AGENT)
    settings.PITWEB_AGENT_PACKAGES = {"waiter": {"argv": ["python3", str(path)], "dialect": "pit"}}
    return path


@pytest.fixture()
def agent(script: Path, staff: User, submitter: User) -> RegisteredAgent:
    return execution_services.agent_register(
        by=staff, name="waiter", owner=submitter, package="waiter"
    )


@pytest.fixture()
def http_agent(submitter: User) -> RegisteredAgent:
    """An HTTP agent as staff register one (made here directly: no name to resolve)."""
    return RegisteredAgent.objects.create(
        name="web", owner=submitter, transport=RegisteredAgent.Transport.HTTP, dialect="pit",
        url=ENDPOINT, digest=canonical.digest({"transport": "http", "url": ENDPOINT}),
        label=f"http:{ENDPOINT}",
    )  # fmt: skip
