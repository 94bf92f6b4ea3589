"""The forward board in a real browser: two committed agents run on the days appended
after their commitment, their forward returns beside their backtests, the decay drawn,
on a desktop and on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.forward.models import Commitment
from tests.e2e.test_accessibility import _axe, _require_axe
from tests.e2e.test_site import PHONE
from tests.pitweb.forward.test_forward_execution import (
    Line,
    _register,
    committed,  # noqa: F401 - the module's fixture
    line,  # noqa: F401 - the module's fixture
    packages,  # noqa: F401 - the module's fixture
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def real_worker(eager_celery: None, settings: Any) -> Iterator[None]:
    """The line's runs are executed, verified and priced eagerly (the real workers run
    them in tests/pitweb/forward/test_forward_workers.py); these pages only read them."""
    settings.PITWEB_MIN_RANKED_TRADES = 1
    yield


def test_the_forward_board_draws_the_decay_on_a_desktop_and_a_phone(
    live_server: Any,
    page: Any,
    browser: Any,
    line: Line,  # noqa: F811
    committed: list[Commitment],  # noqa: F811
    staff: User,
    screenshots: Path,
) -> None:
    for folder in line.folders[1:]:
        _register(folder, line.prices, staff)
    page.goto(live_server.url + "/forward/")
    page.get_by_role("link", name="The forward board", exact=True).click()
    rows = page.locator("#forward-board-table tbody tr")
    assert rows.count() == 2
    text = rows.all_inner_texts()
    assert any("stub" in t for t in text) and any("cheat" in t for t in text)
    assert all("forward-tested" in t for t in text)
    # both figures drawn by Plotly from the page's own data, with their tables
    for chart in ("fig-decay", "fig-curves"):
        page.locator(f'[data-figure="{chart}"] .main-svg').first.wait_for()
    assert page.locator('a[href*="table=curves"]').count() == 2  # CSV and JSON
    assert page.locator('.site-nav a[aria-current="page"]').inner_text() == "Forward track"
    page.screenshot(path=str(screenshots / "forward-board.png"), full_page=True)
    assert page.console_errors == []
    _require_axe()
    for name, viewport in (("desktop", {"width": 1280, "height": 800}), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport, bypass_csp=True)
        seen = context.new_page()
        seen.goto(page.url)
        seen.locator('[data-figure="fig-decay"] .main-svg').first.wait_for()
        assert seen.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        assert _axe(seen) == [], name
        if name == "phone":
            seen.screenshot(path=str(screenshots / "forward-board-phone.png"), full_page=True)
        context.close()
