"""The forward track in a real browser: the track page states the log's head and lists a
commitment, on a desktop and on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.execution import services as execution_services
from pitweb.forward import services
from pitweb.releases.models import Release
from tests.e2e.test_site import PHONE

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def real_worker() -> Iterator[None]:
    """No worker: these pages read the log, which a request writes and no job touches."""
    yield


@pytest.fixture()
def committed(
    registered: Release, submitter: User, staff: User, settings: Any, tmp_path: Path
) -> Any:
    script = tmp_path / "waiter.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    settings.PITWEB_AGENT_PACKAGES = {
        "waiter": {"argv": ["python3", str(script)], "dialect": "pit"}
    }
    agent = execution_services.agent_register(
        by=staff, name="waiter", owner=submitter, package="waiter"
    )
    return services.commitment_create(
        by=submitter, agent=agent, release=registered, forms=["8-K"], hold_sessions=5,
        clocks=["pit"], arms=["main", "redacted", "shifted"], model_version="demo-1",
        training_cutoff="2022-12-31",
    )  # fmt: skip


def test_the_forward_page_shows_the_logs_head_and_a_commitment(
    live_server: Any, page: Any, browser: Any, committed: Any, screenshots: Path
) -> None:
    page.goto(live_server.url + "/forward/")
    head = page.locator("#log-head")
    assert committed.entry.digest in head.inner_text() and "entry 1" in head.inner_text()
    row = page.locator("#commitments-table tbody tr")
    assert row.count() == 1
    assert "waiter" in row.inner_text() and "demo-1" in row.inner_text()
    assert page.locator('.site-nav a[aria-current="page"]').inner_text() == "Forward track"
    page.screenshot(path=str(screenshots / "forward.png"), full_page=True)
    assert page.console_errors == []
    phone = browser.new_context(viewport=PHONE).new_page()
    phone.goto(live_server.url + "/forward/")
    # the page never scrolls sideways on a phone: a wide table scrolls in its own frame
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    phone.screenshot(path=str(screenshots / "forward-phone.png"), full_page=True)
    phone.context.close()
