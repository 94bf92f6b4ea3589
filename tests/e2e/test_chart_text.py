"""A submitter's words drawn in a figure are text. Plotly reads a subset of HTML in what it
draws (tick labels, hover, titles, legends), so an agent named ``<a href=...>`` would be a
live off-site link on our page and a ``<span style=...>`` would restyle the chart. In a
real browser, on every page with a figure, they show as the characters written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from pitweb.charts import TICK_CHARS
from pitweb.releases.models import Release
from pitweb.runs.models import Run
from tests.e2e.conftest import settled
from tests.e2e.test_site import PHONE, charts_drawn, submit
from tests.pitweb.conftest import Artifacts, make_run

pytestmark = pytest.mark.django_db(transaction=True)

LINK = '<a href="https://evil.example/x">click</a>'
BIG = '<span style="font-size:90px">big</span>'

# What a page holds that came from markup: links anywhere to the hostile host, links
# inside a figure, elements restyled by the injected style; and the text figures draw.
MARKUP = """() => {
  const xlink = "http://www.w3.org/1999/xlink";
  const href = (a) => a.getAttribute("href") || a.getAttributeNS(xlink, "href") || "";
  const styled = (e) => e.getAttribute("style").replace(/\\s/g, "").includes("font-size:90px");
  return {
    offsite: [...document.querySelectorAll("a")].map(href).filter((h) => h.includes("evil")),
    figure_links: document.querySelectorAll(".js-plotly-plot a").length,
    styled: [...document.querySelectorAll("[style]")].filter(styled).length,
    figure_text: [...document.querySelectorAll(".js-plotly-plot text")].map((t) => t.textContent),
  };
}"""


def hostile_run(out: Path, release: Path, prices: Path, name: str, version: str) -> Artifacts:
    from harness.agents.adapters.plain import from_callable

    def first_two(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=2)["rows"]]

    return make_run(
        release, out, prices, agent=from_callable(first_two, name=name), model_version=version
    )


@pytest.fixture(scope="module")
def link_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    return hostile_run(tmp_path_factory.mktemp("link"), site_release, site_prices, LINK, BIG)


@pytest.fixture(scope="module")
def big_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    return hostile_run(tmp_path_factory.mktemp("big"), site_release, site_prices, BIG, LINK)


@pytest.fixture()
def hostile_runs(
    priced_release: Any, submitter: User, link_run: Artifacts, big_run: Artifacts
) -> tuple[Run, Run]:
    """Both runs verified and priced by the real worker, their names stored as written."""
    a, b = submit(submitter, link_run), submit(submitter, big_run)
    settled()
    for run in (a, b):
        run.refresh_from_db()
        assert run.status == "verified" and run.platform is not None, run.status
    assert (a.agent, b.agent) == (LINK, BIG)
    return a, b


def no_markup(page: Any) -> dict[str, Any]:
    found = page.evaluate(MARKUP)
    assert found["offsite"] == [] and found["figure_links"] == 0 and found["styled"] == 0, found
    return found


def test_the_compare_chart_draws_agent_names_as_text_on_desktop_and_phone(
    live_server: Any, page: Any, hostile_runs: tuple[Run, Run], screenshots: Path
) -> None:
    a, b = hostile_runs
    page.goto(live_server.url + f"/compare/?runs={a.body_sha256[7:]},{b.body_sha256[7:]}")
    assert charts_drawn(page) == 1
    # each tick reads the name's markup as characters (its start: a long label is
    # shortened in the middle and wrapped) and ends with the run id
    ticks = page.locator("[data-figure='fig-compare'] .ytick text")
    drawn = sorted("".join(text.split()) for text in ticks.all_text_contents())
    assert len(drawn) == 2
    for run in (a, b):
        start = "".join(run.agent[: TICK_CHARS - 1].split())
        assert any(d.startswith(start) and d.endswith(run.run_id) for d in drawn), (start, drawn)
    for n in range(ticks.count()):
        box = ticks.nth(n).bounding_box()
        assert box is not None and box["width"] > 0  # drawn, not only present
    no_markup(page)
    # the chart's numbers, as a table beside it, name each run as written too
    numbers = page.locator("#fig-compare-numbers").text_content() or ""
    assert f"{LINK} {a.run_id}" in numbers and f"{BIG} {b.run_id}" in numbers
    assert page.locator("#fig-compare-numbers a, #fig-compare-numbers span").count() == 0
    # hovered, each bar's label says the whole name as written
    hovered = []
    bars = page.locator("[data-figure='fig-compare'] .trace.bars .point path")
    assert bars.count() == 4
    label = "[data-figure='fig-compare'] .hoverlayer .hovertext"
    for n in range(bars.count()):
        # away first, until the last bar's label is gone: a label still showing would be
        # read as this bar's
        page.mouse.move(0, 0)
        page.wait_for_selector(label, state="detached")
        bars.nth(n).hover(force=True)
        page.wait_for_selector(label)
        hovered.append(page.locator("[data-figure='fig-compare'] .hoverlayer").text_content())
        no_markup(page)
    assert any(f"{LINK} {a.run_id}" in h for h in hovered), hovered
    assert any(f"{BIG} {b.run_id}" in h for h in hovered), hovered
    page.locator("[data-figure='fig-compare']").screenshot(
        path=str(screenshots / "compare-hostile-hover.png")
    )
    page.mouse.move(0, 0)
    page.screenshot(path=str(screenshots / "compare-hostile.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    assert charts_drawn(page) == 1
    no_markup(page)
    page.screenshot(path=str(screenshots / "compare-hostile-phone.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert page.console_errors == []


def test_the_board_and_the_run_page_show_the_names_as_written(
    live_server: Any, page: Any, hostile_runs: tuple[Run, Run]
) -> None:
    a, b = hostile_runs
    page.goto(live_server.url + "/")
    no_markup(page)
    board = page.locator("body").inner_text()
    assert LINK in board and BIG in board
    for run, name in ((a, LINK), (b, BIG)):
        page.goto(live_server.url + f"/runs/{run.body_sha256[7:]}/")
        assert charts_drawn(page) >= 1
        no_markup(page)
        assert name in page.locator("body").inner_text()
    assert page.console_errors == []


def test_the_release_chart_draws_form_names_as_text(
    live_server: Any, page: Any, registered: Any
) -> None:
    """A release whose forms are markup (a release is registered by staff, but its chart
    draws its forms with the same function as a submitter's words)."""
    prefix = "releases/hostile-forms"
    segments = [
        {"date": "2023-03-01", "form": LINK, "rows": 7},
        {"date": "2023-03-02", "form": BIG, "rows": 3},
    ]
    default_storage.save(f"{prefix}/index.json", ContentFile(json.dumps({"segments": segments})))
    manifest = {**registered.manifest, "name": LINK}
    manifest["row_counts"] = {**manifest["row_counts"], "by_form": {LINK: 7, BIG: 3}}
    release = Release.objects.create(
        content_digest="sha256:" + "e" * 64,
        name=LINK,
        manifest=manifest,
        window_start=registered.window_start,
        window_end=registered.window_end,
        row_count=10,
        storage_prefix=prefix,
    )
    page.goto(live_server.url + f"/releases/{release.digest_hex}/")
    assert charts_drawn(page) == 1
    found = no_markup(page)
    assert LINK in found["figure_text"] and BIG in found["figure_text"]  # the legend
    assert LINK in page.locator("h1").inner_text()
    assert page.console_errors == []
