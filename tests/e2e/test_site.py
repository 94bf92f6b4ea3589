"""The leaderboard and a run page in a real browser; a staff re-verification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.runs import services
from pitweb.runs.models import Run, VerificationJob
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts) -> Run:
    files = artifacts.files()
    return services.run_submit(
        user=user, receipt=files["receipt"], trajectory=files["trajectory"], prices=files["prices"]
    ).run


def charts_drawn(page: Any) -> int:
    page.wait_for_selector("[data-figure] .main-svg", timeout=15_000)
    return int(page.locator("[data-figure].js-plotly-plot").count())


def test_leaderboard_and_run_page_draw_their_charts(
    live_server: Any,
    page: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    screenshots: Path,
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    page.goto(live_server.url + "/")
    ranked = page.locator("table.board").first.locator("tbody tr")
    assert ranked.count() == 2
    assert {a.run_id, b.run_id} <= set(page.locator("table.board").first.inner_text().split())
    page.screenshot(path=str(screenshots / "leaderboard.png"), full_page=True)

    page.click(f"text={a.run_id}")
    page.wait_for_url(f"**/runs/{a.body_sha256[7:]}/")
    assert charts_drawn(page) == 2
    bars = page.locator("[data-figure='fig-returns'] .trace.bars .point path")
    assert bars.count() > 0  # the bars themselves, not just an empty plot area
    page.screenshot(path=str(screenshots / "run.png"), full_page=True)

    page.goto(live_server.url + f"/compare/?runs={a.body_sha256[7:]},{b.body_sha256[7:]}")
    assert charts_drawn(page) == 1
    assert page.console_errors == []


def test_staff_reverifies_from_the_run_page(
    live_server: Any,
    page: Any,
    registered: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    screenshots: Path,
) -> None:
    run = submit(submitter, stub_run)
    page.goto(live_server.url + "/admin/login/?next=/runs/" + run.body_sha256[7:] + "/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", "pw-carol")
    page.click("input[type=submit]")
    page.wait_for_url(f"**/runs/{run.body_sha256[7:]}/")
    assert page.locator("#jobs tbody tr").count() == 1
    form = page.locator("#reverify-form")
    form.locator("input[name=reason]").fill("checking the new verifier")
    form.locator("input[name=confirm]").check()
    form.locator("button").click()
    page.wait_for_selector("text=verification job")
    assert page.locator("#jobs tbody tr").count() == 2
    assert "checking the new verifier" in page.locator("#jobs").inner_text()
    assert VerificationJob.objects.filter(run=run).count() == 2
    page.screenshot(path=str(screenshots / "reverified.png"), full_page=True)
    assert page.console_errors == []


def test_runs_are_compared_from_the_leaderboard(
    live_server: Any,
    page: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    page.goto(live_server.url + "/")
    for run in (a, b):
        page.check(f"input[name=run][value='{run.body_sha256[7:]}']")
    page.click("text=Compare checked runs")
    page.wait_for_url("**/compare/?run=*")
    assert charts_drawn(page) == 1
    traces = page.locator("[data-figure='fig-compare'] .trace.bars").count()
    assert traces == 2
    assert page.console_errors == []
