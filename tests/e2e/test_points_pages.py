"""The judged-points pages in a real browser: the demo's set answered and judged by the
real worker, its distribution and radar drawn, on a desktop and on a phone."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from harness.points.metrics import CLASSES
from pitweb.points.models import JudgedSet
from tests.e2e.test_site import PHONE, charts_drawn

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_points_draw_their_distribution_and_radar_on_desktop_and_phone(
    live_server: Any, page: Any, staff: User, screenshots: Path, settings: Any, tmp_path: Path
) -> None:
    staff.username = "staff"
    staff.save()
    call_command("demo_points", stdout=io.StringIO())  # the real worker answers and judges
    assert JudgedSet.objects.count() == 2
    page.goto(live_server.url + "/points/")
    assert "finance-demo" in page.locator("table").first.inner_text()
    page.click("text=finance-demo")
    page.wait_for_url("**/points/finance-demo/")
    assert charts_drawn(page) == 3  # the distribution, the radar, accuracy per suite
    # the radar: one filled trace per judged set over the six classes
    radar = page.locator("[data-figure='fig-radar']")
    assert radar.locator(".scatterlayer .trace").count() == 2
    labels = {(t or "").replace(" ", "") for t in radar.locator("svg text").all_text_contents()}
    assert all(c.replace("_", "") in labels for c in CLASSES), labels  # the six spokes
    bars = page.locator("[data-figure='fig-distribution'] .trace.bars .point path")
    assert bars.count() >= 2
    table = page.locator("#judged-table").inner_text()
    assert "demo-reader-careful-not-a-model" in table and "demo-reader-hasty-not-a-model" in table
    assert "a demo, not a model" in table
    # nothing ranked: said once above the table, not in a column of "no"
    assert "the demo judge" in page.locator("#nothing-ranked").inner_text()
    # the commitment can be checked: the salt is published, the recipe is on the page
    assert "pit-harness points commitment" in page.content()
    page.screenshot(path=str(screenshots / "points.png"), full_page=True)
    radar.screenshot(path=str(screenshots / "points-radar.png"))
    page.set_viewport_size(PHONE)
    page.reload()
    assert charts_drawn(page) == 3
    page.screenshot(path=str(screenshots / "points-phone.png"), full_page=True)
    page.screenshot(
        path=str(screenshots / "points-phone-top.png"),
        clip={"x": 0, "y": 900, "width": PHONE["width"], "height": 1700},
        full_page=True,
    )
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    # a judged set's verdicts, filtered by class
    page.set_viewport_size({"width": 1280, "height": 900})
    judged = JudgedSet.objects.get(answer_set__model="demo-reader-hasty-not-a-model")
    page.goto(
        live_server.url + f"/points/finance-demo/judged/{judged.pk}/?class=numeric_factual_error"
    )
    rows = page.locator("#verdicts tbody tr")
    expected = judged.summary["class_counts"]["numeric_factual_error"]
    assert rows.count() == expected and expected > 0
    page.screenshot(path=str(screenshots / "points-judged.png"), full_page=True)
    assert page.console_errors == []
