"""The leaderboard and a run page in a real browser; a staff re-verification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.board import services as board_services
from pitweb.runs import services
from pitweb.runs.models import Run, VerificationJob
from tests.e2e.conftest import settled
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts) -> Run:
    """Upload, then wait for the real worker to verify and price it."""
    files = artifacts.files()
    run = services.run_submit(
        user=user, receipt=files["receipt"], trajectory=files["trajectory"], prices=files["prices"]
    ).run
    settled()
    run.refresh_from_db()
    return run


def charts_drawn(page: Any) -> int:
    page.wait_for_selector("[data-figure] .main-svg", timeout=15_000)
    return int(page.locator("[data-figure].js-plotly-plot").count())


PHONE = {"width": 390, "height": 844}


def test_leaderboard_and_run_page_draw_their_charts(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    screenshots: Path,
    settings: Any,
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    page.goto(live_server.url + "/benchmarks/")
    ranked = page.locator("table.board").first.locator("tbody tr")
    assert ranked.count() == 2
    board = page.locator("table.board").first.inner_text()
    assert {a.run_id, b.run_id} <= set(board.split())
    assert "%" in board
    # the board fits 1280 px: secondary columns fold into each row's "more"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    first = page.locator("table.board").first.locator("tbody tr").first
    first.locator("details.more summary").click()
    assert "v1 · SYNTHETIC reference prices" in first.inner_text()  # the price version
    page.screenshot(path=str(screenshots / "leaderboard.png"), full_page=True)
    # sortable: the shifted-pit column sorts ascending on a second click
    header = page.locator("table.board").first.locator("th", has_text="shifted pit")
    header.click()
    header.click()
    values = page.locator("table.board").first.locator("tbody tr td:nth-child(3)")
    numbers = [float(values.nth(i).get_attribute("data-value") or 0) for i in range(2)]
    assert numbers == sorted(numbers)
    hint = page.locator(".scroll-hint").first
    assert not hint.is_visible()  # the whole table fits: no hint
    page.set_viewport_size(PHONE)
    page.reload()
    page.screenshot(path=str(screenshots / "leaderboard-phone.png"), full_page=True)
    assert page.locator(".scroll-hint").first.is_visible()  # the rest is a swipe away
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    # the ranked figure is on screen without scrolling sideways
    box = page.locator("table.board").first.locator("tbody tr td:nth-child(3)").first.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    # the board drawn above its table; a click on a run's point opens that run
    assert charts_drawn(page) == 1
    assert "diagonal" in page.locator("#board-chart-caption").inner_text()
    page.locator("[data-figure='fig-board']").screenshot(path=str(screenshots / "board-chart.png"))
    point = page.locator("[data-figure='fig-board'] .scatterlayer .points path").first
    spot = point.bounding_box()
    assert spot is not None
    page.mouse.move(spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2)
    page.mouse.click(spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2)
    page.wait_for_url("**/runs/*/?submission=*")
    page.go_back()

    page.locator("a", has_text=a.run_id).first.click()  # the link, not the chart's table
    page.wait_for_url(f"**/runs/{a.body_sha256[7:]}/?submission=*")
    # returns with intervals; the stub's deltas are all zero, said in words, not drawn
    assert charts_drawn(page) == 1
    assert "Every contamination delta is +0.00 pp" in page.locator("#no-delta-chart").inner_text()
    bars = page.locator("[data-figure='fig-returns'] .trace.bars .point path")
    assert bars.count() > 0  # the bars themselves, not just an empty plot area
    assert page.locator("[data-figure='fig-returns'] .errorbar").count() > 0  # intervals
    assert page.locator("#checklist tbody tr").count() == 6
    # hovered, the chart's mode bar shows, and it does not cover the title
    chart = page.locator("[data-figure='fig-returns']")
    chart.hover()
    page.wait_for_selector("[data-figure='fig-returns'] .modebar", state="visible")
    chart.screenshot(path=str(screenshots / "chart-hovered.png"))
    bar = page.locator("[data-figure='fig-returns'] .modebar").bounding_box()
    title = page.locator("[data-figure='fig-returns'] .gtitle").bounding_box()
    assert bar and title
    overlap_x = min(bar["x"] + bar["width"], title["x"] + title["width"]) - max(
        bar["x"], title["x"]
    )
    overlap_y = min(bar["y"] + bar["height"], title["y"] + title["height"]) - max(
        bar["y"], title["y"]
    )
    assert overlap_x <= 0 or overlap_y <= 0
    page.screenshot(path=str(screenshots / "run.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots / "run-phone.png"), full_page=True)
    # on a phone the page does not scroll sideways: wide tables scroll in their own box
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1

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
    page.wait_for_url(f"**/runs/{run.body_sha256[7:]}/*")
    assert page.locator("#jobs tbody tr").count() == 1
    # the staff's actions sit at the top, above the figures, in the first screenful
    staff_box = page.locator("#staff").bounding_box()
    figures_box = page.locator("h2", has_text="Platform figures").bounding_box()
    assert staff_box and figures_box and staff_box["y"] < figures_box["y"]
    assert staff_box["y"] < 900
    form = page.locator("#reverify-form")
    form.get_by_label("Reason for re-verifying").fill("checking the new verifier")
    form.locator("button").click()  # unconfirmed: nothing done, the reason kept
    page.wait_for_selector("text=Nothing was done: tick the confirmation box to act.")
    form = page.locator("#reverify-form")
    assert form.get_by_label("Reason for re-verifying").input_value() == "checking the new verifier"
    assert page.locator("#jobs tbody tr").count() == 1
    assert page.locator("#unhide-form").count() == 0  # only the actions that apply
    form.get_by_label("I confirm").check()
    form.locator("button").click()
    page.wait_for_selector("text=Re-verification queued as job")
    assert page.locator("#jobs tbody tr").count() == 2
    assert "checking the new verifier" in page.locator("#jobs").inner_text()
    assert VerificationJob.objects.filter(run=run).count() == 2
    page.screenshot(path=str(screenshots / "reverified.png"), full_page=True)
    assert page.console_errors == []


def test_runs_are_compared_from_the_leaderboard(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    page.goto(live_server.url + "/benchmarks/")
    for run in (a, b):
        page.check(f"input[name=run][value='{run.body_sha256[7:]}']")
    page.click("text=Compare checked runs")
    page.wait_for_url("**/compare/?run=*")
    assert charts_drawn(page) == 1
    # the shifted arm (ranked) and the main arm, each with both runs
    traces = page.locator("[data-figure='fig-compare'] .trace.bars")
    assert traces.count() == 2
    assert page.locator("[data-figure='fig-compare'] .trace.bars .point path").count() == 4
    assert page.console_errors == []


def test_a_forged_runs_number_appears_nowhere_but_in_its_refuted_claim(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    screenshots: Path,
) -> None:
    import json

    from harness.receipt.build import receipt_text

    data = json.loads(stub_run.receipt.read_text())
    body = data["body"]
    cell = next(c for c in body["cells"] if (c["arm"], c["clock"]) == ("main", "pit"))
    # one score edited, the body honestly re-hashed; a figure no time of day can spell (a
    # job created 43.21 s past a minute would put "43.21" in the jobs table's times)
    cell["total_return"] = 0.8642
    forged = stub_run.files(receipt=receipt_text(body, data["emitted_at"]).encode())
    run = services.run_submit(
        user=submitter,
        receipt=forged["receipt"],
        trajectory=forged["trajectory"],
        prices=forged["prices"],
    ).run
    other = submit(submitter, picky_run)
    run.refresh_from_db()
    assert run.status == "mismatch" and run.failed_check == "cell main/pit total_return"
    shown = ("0.8642", "86.42")

    page.goto(live_server.url + "/benchmarks/")
    board = (
        page.locator("main").inner_text()
        if page.locator("main").count()
        else page.inner_text("body")
    )
    assert not any(v in board for v in shown)
    assert "failed verification: cell main/pit total_return differs" in board
    page.screenshot(path=str(screenshots / "leaderboard-forged.png"), full_page=True)
    job = run.jobs.first()
    for path in (
        "/api/leaderboard/?all=1",
        "/api/leaderboard.csv",
        "/api/runs/",
        f"/api/jobs/{job.pk}/",
        f"/runs/{run.body_sha256[7:]}/tables/jobs?format=csv",
    ):
        text = page.request.get(live_server.url + path).text()
        assert not any(v in text for v in shown), path
    sha = run.body_sha256[7:]
    assert page.request.get(live_server.url + f"/runs/{sha}/cells.json").status in (404, 409)
    page.goto(live_server.url + f"/compare/?runs={sha},{other.body_sha256[7:]}")
    assert not any(v in page.inner_text("body") for v in shown)
    charted = page.evaluate(
        "() => [...document.querySelectorAll('script[type=\"application/json\"]')]"
        ".map(s => s.textContent).join(' ')"
    )
    assert not any(v in charted for v in shown)

    page.goto(live_server.url + f"/runs/{sha}/")
    claim = page.locator("#unproven-claim").inner_text()
    assert "refuted claim" in claim and "86.42%" in claim
    outside = page.evaluate(
        "() => { const c = document.body.cloneNode(true);"
        " c.querySelectorAll('.claim').forEach(e => e.remove()); return c.innerText; }"
    )
    assert not any(v in outside for v in shown)
    page.screenshot(path=str(screenshots / "run-forged.png"), full_page=True)


def test_pages_keep_to_the_content_security_policy(
    live_server: Any, page: Any, priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    """Every page under the policy: no inline script, no third party; Plotly still draws
    and the API docs still render (their set-up script comes from a URL)."""
    run = submit(submitter, stub_run)
    violations: list[str] = []
    page.on("console", lambda m: "Content Security Policy" in m.text and violations.append(m.text))
    response = page.goto(live_server.url + f"/runs/{run.body_sha256[7:]}/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-eval" not in policy
    assert charts_drawn(page) >= 1
    for path in ("/", "/methodology/", f"/releases/{priced_release.digest_hex}/", "/admin/login/"):
        page.goto(live_server.url + path)
    page.goto(live_server.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .info", timeout=15_000)
    assert violations == [] and page.console_errors == []


def test_an_incomplete_cell_reads_as_a_fact_on_desktop_and_phone(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    site_release: Path,
    site_prices: Path,
    tmp_path: Path,
    screenshots: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cell whose agent process exited in every attempt: the run page says so in words
    a visitor reads without scrolling sideways, and the run is kept off the ranked board."""
    from tests.pitweb.conftest import exiting_agent, make_run

    agent = exiting_agent(monkeypatch, ("redacted", "pit"), times=None, name="always-exits")
    run = submit(
        submitter,
        make_run(site_release, tmp_path / "exits", site_prices, agent=agent),
    )
    assert run.status == "verified"
    page.goto(live_server.url + f"/runs/{run.body_sha256[7:]}/?submission={run.pk}")
    said = page.locator("#not-rankable").inner_text()
    assert "cell redacted/pit: incomplete, the agent's process exited in each of its 3" in said
    assert "3 attempt(s) ended before their cell did" in page.locator("#retried").inner_text()
    # the incomplete cell has no figure: its delta is not counted as one of "every" zero
    said = page.locator("#no-delta-chart").inner_text()
    assert "Every contamination delta with a figure is +0.00 pp (1 n/a" in said
    page.screenshot(path=str(screenshots / "run-incomplete.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots / "run-incomplete-phone.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.goto(live_server.url + "/benchmarks/")
    # not ranked: listed only under the cells that did not complete
    html = page.content()
    assert "No run of this benchmark is ranked yet." in html
    assert html.index('id="errors"') < html.index(run.run_id)
    assert page.console_errors == []


@pytest.fixture(scope="module")
def three_attempts(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> list[Artifacts]:
    """One agent (the stub) uploaded three times under three model versions: one family."""
    from tests.pitweb.conftest import make_run

    root = tmp_path_factory.mktemp("attempts")
    return [
        make_run(site_release, root / f"v{n}", site_prices, probe=0, model_version=f"v{n}")
        for n in range(3)
    ]


def test_a_family_ranks_once_as_best_of_n_and_its_attempts_are_one_click_away(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    three_attempts: list[Artifacts],
    screenshots: Path,
    settings: Any,
) -> None:
    runs = [submit(submitter, a) for a in three_attempts]
    page.goto(live_server.url + "/benchmarks/")
    ranked = page.locator("table.board").first.locator("tbody tr")
    assert ranked.count() == 1
    row = ranked.first.inner_text()
    assert "best of 3 attempts" in row and "at 98.3%" in row  # 0.95^(1/3)
    page.screenshot(path=str(screenshots / "leaderboard-attempts.png"), full_page=True)
    page.click("text=best of 3 attempts")
    page.wait_for_url(f"**/families/{runs[0].family_id}/")
    assert "3 attempts" in page.locator("#attempts-verdict").inner_text()
    assert "98.3%" in page.locator("#family-best").inner_text()
    assert page.locator("table.board tbody tr").count() == 3
    assert charts_drawn(page) == 1
    page.screenshot(path=str(screenshots / "family.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    assert charts_drawn(page) == 1
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=str(screenshots / "family-phone.png"), full_page=True)
    # a published snapshot: cited from the board, frozen, readable on a phone
    snapshot = board_services.snapshot_publish(filters={}, reason="browser walk")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + "/benchmarks/")
    page.click("#cite a >> text=snapshot")
    page.wait_for_url(f"**/snapshots/{snapshot.pk}/")
    assert snapshot.content_digest in page.locator("#snapshot-digest").inner_text()
    assert "best of 3 attempts" in page.locator("table.board").first.inner_text()
    page.screenshot(path=str(screenshots / "snapshot.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=str(screenshots / "snapshot-phone.png"), full_page=True)
    # each attempt's page says it is one of the family's three, and links back
    page.goto(live_server.url + f"/families/{runs[0].family_id}/")
    page.locator("a", has_text=runs[1].run_id).first.click()
    assert "one of 3 attempts" in page.locator("#verdicts").inner_text()
    assert page.locator(f"a[href='/families/{runs[0].family_id}/']").count() == 1
    assert page.console_errors == []


def test_a_snapshot_shows_a_run_withdrawn_since_as_removed_on_desktop_and_phone(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    screenshots: Path,
    settings: Any,
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    kept, gone = submit(submitter, stub_run), submit(submitter, picky_run)
    snapshot = board_services.snapshot_publish(filters={}, reason="browser walk")
    services.run_withdraw(run=gone, owner=submitter, reason="superseded")
    page.goto(live_server.url + f"/snapshots/{snapshot.pk}/")
    removed = page.locator("tr.removed")
    assert removed.count() == 1
    assert "removed after this snapshot" in removed.first.inner_text()
    text = page.inner_text("body")
    assert gone.run_id not in text and kept.run_id in text
    assert snapshot.content_digest in page.locator("#snapshot-digest").inner_text()
    page.screenshot(path=str(screenshots / "snapshot-removed.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=str(screenshots / "snapshot-removed-phone.png"), full_page=True)
    assert page.console_errors == []


def test_the_home_page_lists_two_windows_as_two_benchmarks_each_ranking_its_own(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    longer_window_run: Artifacts,
    screenshots: Path,
    settings: Any,
) -> None:
    """Two windows of one release: the home page lists two benchmarks, and each board
    ranks its own run alone (rank 1), never the other window's."""
    settings.PITWEB_MIN_RANKED_TRADES = 1
    short, longer = submit(submitter, stub_run), submit(submitter, longer_window_run)
    page.goto(live_server.url + "/")
    links = page.locator("#benchmarks + .table-wrap table a[href^='/benchmarks/']")
    names = [links.nth(i).inner_text() for i in range(links.count())]
    assert sorted(n for n in names if "2023-03-01.." in n) == sorted(
        [short.benchmark.name, longer.benchmark.name]  # type: ignore[union-attr]
    )
    page.screenshot(path=str(screenshots / "home.png"), full_page=True)
    for mine, theirs in ((short, longer), (longer, short)):
        page.goto(live_server.url + "/")
        page.click(f"text={mine.benchmark.name}")  # type: ignore[union-attr]
        page.wait_for_url(f"**/benchmarks/{mine.benchmark.key}/")  # type: ignore[union-attr]
        ranked = page.locator("table.board").first.locator("tbody tr")
        assert ranked.count() == 1
        row = ranked.first.inner_text()
        assert mine.run_id in row and row.split()[0] == "1"
        assert theirs.run_id not in page.content()
    assert page.console_errors == []


@pytest.mark.parametrize(
    "viewport", [{"width": 1280, "height": 900}, PHONE], ids=["desktop", "phone"]
)
def test_a_score_from_memory_is_flagged_in_words_on_the_board_and_its_page(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    memory_cheat_run: Artifacts,
    screenshots: Path,
    viewport: dict[str, int],
) -> None:
    """The deliberate cheat's row carries a badge and its figures in words where the
    row starts (no sideways scrolling to find them); the honest stub's row carries none."""
    honest, cheat = submit(submitter, stub_run), submit(submitter, memory_cheat_run)
    page.set_viewport_size(viewport)
    assert cheat.benchmark is not None
    page.goto(live_server.url + f"/benchmarks/{cheat.benchmark.key}/")
    rows = page.locator("table.board").first.locator("tbody tr")
    flagged = rows.filter(has_text=cheat.run_id)
    badge, words = flagged.locator(".memory-flag"), flagged.locator(".memory-words")
    assert badge.is_visible() and badge.inner_text() == "score from memory"
    assert words.is_visible() and words.inner_text().startswith("Score from memory: main beat")
    box = words.bounding_box()
    assert box is not None and box["x"] + box["width"] <= viewport["width"]  # read in place
    assert rows.filter(has_text=honest.run_id).locator(".memory-flag").count() == 0
    name = "desktop" if viewport["width"] > PHONE["width"] else "phone"
    page.screenshot(path=str(screenshots / f"board-memory-{name}.png"), full_page=True)
    page.goto(live_server.url + f"/runs/{cheat.body_sha256[7:]}/?submission={cheat.pk}")
    assert "score from memory: main beat shifted by +" in page.locator("#verdicts").inner_text()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"] + 1
    assert page.console_errors == []
