"""Every page type in a real browser, checked by axe-core (the npm package, injected into
the page) for WCAG 2.1 A and AA: no serious or critical violation, signed out and signed
in, on a desktop (1280 px) and a phone (390 px); no page wider than its window but inside
a box that scrolls sideways; a screenshot of each; and a board reached by keyboard alone,
its focus always visible.

The tour is one test: a page set worth checking (verified and priced runs, a snapshot, an
execution, judged points) costs the real worker most of a minute to build, and a browser
test's database is emptied after each test. It reports every problem it finds before it
fails, so one run lists all that is left to fix."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from harness.points.live import LivePoint, market_day
from pitweb.board.services import snapshot_publish
from pitweb.execution.models import ExecutionJob, ExecutionState, RegisteredAgent
from pitweb.points import services as points_services
from pitweb.points.models import JudgedSet
from pitweb.runs.models import Run
from tests.e2e.conftest import settled
from tests.e2e.test_site import submit
from tests.pitweb.conftest import Artifacts
from tests.support import pitfall_cohort as pitfall_build

pytestmark = pytest.mark.django_db(transaction=True)

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21aa"]
BLOCKING = {"serious", "critical"}
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@dataclass(frozen=True)
class Seeded:
    """What the tour's addresses are built from."""

    a: Run
    b: Run
    snapshot: int
    execution: int
    point_set: str
    judged: int
    live_cohort: str


@dataclass(frozen=True)
class PageType:
    name: str
    path: Callable[[Seeded], str]
    # pages that show staff more (actions, forms) are checked as staff too
    staff_differs: bool = False
    # who may see it at all (the agents page asks a visitor to sign in)
    signed_in_only: bool = False
    # staff pages: a submitter is refused (403), so only staff see them
    staff_only: bool = False
    status: int = 200


def _sha(run: Run) -> str:
    return run.body_sha256.removeprefix("sha256:")


def _named(name: str) -> bool:
    try:
        reverse(name)
    except NoReverseMatch:
        return False
    return True


# Every page type of the site. A new page type is one line here. Left out: the API's docs
# (Swagger UI's own markup, not ours) and Django's admin (staff's tool, Django's markup).
PAGE_TYPES = [
    PageType("home", lambda s: "/", staff_differs=True),
    PageType("board", lambda s: f"/benchmarks/{s.a.benchmark.key}/", staff_differs=True),
    PageType("benchmarks-grouped", lambda s: "/benchmarks/"),
    PageType("run", lambda s: f"/runs/{_sha(s.a)}/", staff_differs=True),
    PageType("compare", lambda s: f"/compare/?runs={_sha(s.a)},{_sha(s.b)}"),
    PageType("compare-empty", lambda s: "/compare/"),
    PageType("releases", lambda s: "/releases/"),
    PageType("release", lambda s: f"/releases/{s.a.release_digest.removeprefix('sha256:')}/"),
    PageType("snapshots", lambda s: "/snapshots/", staff_differs=True),
    PageType("snapshot", lambda s: f"/snapshots/{s.snapshot}/"),
    PageType("family", lambda s: f"/families/{s.a.family_id}/"),
    PageType("points", lambda s: "/points/", staff_differs=True),
    PageType("point-set", lambda s: f"/points/{s.point_set}/", staff_differs=True),
    PageType("judged-set", lambda s: f"/points/{s.point_set}/judged/{s.judged}/"),
    PageType("points-models", lambda s: "/points/models/", staff_only=True),
    PageType("points-board", lambda s: "/points/board/"),
    PageType("live-cohort", lambda s: f"/points/{s.live_cohort}/", staff_differs=True),
    PageType("pitfall-cohorts", lambda s: "/points/pitfall/", staff_differs=True),
    PageType("point-set-upload", lambda s: "/points/upload/", staff_only=True),
    PageType("agents", lambda s: "/agents/", staff_differs=True, signed_in_only=True),
    PageType("execution", lambda s: f"/executions/{s.execution}/", staff_differs=True),
    PageType("forward", lambda s: "/forward/", staff_differs=True),
    PageType("forward-board", lambda s: "/forward/board/"),
    PageType("methodology", lambda s: "/methodology/"),
    PageType("status", lambda s: "/status/", staff_differs=True),
    PageType("changelog", lambda s: "/changelog/"),
    PageType("not-found", lambda s: "/no-such-page/", status=404),
    *([PageType("sign-in", lambda s: reverse("login"))] if _named("login") else []),
]

# Every element wider than the window that is not inside a box scrolling sideways: what
# makes a page scroll sideways (the document's own width says whether it does)
OVERFLOW = """() => {
  const width = window.innerWidth;
  const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
  const inside = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
    if (p !== document.body && p !== document.documentElement && scrolls(p)) return true; }
    return false; };
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (e.classList.length ? "." + [...e.classList].join(".") : "");
  const wide = [...document.body.querySelectorAll("*")].filter((e) => {
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.right > width + 1 && !inside(e);
  });
  return {page: document.scrollingElement.scrollWidth, width,
          wide: wide.slice(0, 5).map(name)};
}"""

# every chart drawn, or said in words not to be
CHARTS_SETTLED = """() => [...document.querySelectorAll("[data-figure]")].every(
  (n) => n.querySelector(".main-svg") || n.textContent.trim())"""


def _axe(page: Any) -> list[str]:
    """axe-core's serious and critical violations of the page as it stands, a line each:
    rule, impact, the elements' selectors and where the rule is explained."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS
    )
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]} {v['helpUrl']}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


def _signed_in(browser: Any, live_server: Any, user: User | None, viewport: dict[str, int]) -> Any:
    """A browser context signed in as ``user`` (None: a visitor), with its session made
    the way the site makes one."""
    context = browser.new_context(viewport=viewport, bypass_csp=True)
    if user is not None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[django_settings.SESSION_COOKIE_NAME].value
        context.add_cookies(
            [{"name": django_settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
        )
    return context


def _require_axe() -> None:
    if AXE.exists():
        return
    message = f"axe-core is not installed ({AXE}): run `make setup` (npm ci)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture()
def seeded(
    priced_release: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    short_hold_run: Artifacts,
    settings: Any,
    tmp_path: Path,
) -> Seeded:
    """Two verified, priced runs of the submitter's (and a third in another benchmark), a published snapshot, an executed
    agent's job, and the demo's point set answered and judged, all by the real worker."""
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    submit(submitter, short_hold_run)  # another benchmark: the grouped view has two
    snapshot = snapshot_publish(
        filters={"benchmark": a.benchmark.key}, reason="the tour's citation", staff=staff
    )
    agent = RegisteredAgent.objects.create(
        name="reference",
        owner=submitter,
        transport=RegisteredAgent.Transport.STDIO,
        dialect="pit",
        package="pit-stdio-python",
        digest="sha256:" + "a" * 64,
        label="the reference agent",
        registered_by=staff,
    )
    execution = ExecutionJob.objects.create(
        kind=ExecutionJob.Kind.EXECUTE,
        state=ExecutionState.EXECUTED,
        agent=agent,
        release=a.release,
        config={"window": {"start": "2023-03-01", "end": "2023-03-08"}},
        requested_by=submitter,
        made=a,
    )
    staff.username = "staff"  # the demo's points are answered and judged by "staff"
    staff.save()
    call_command("demo_points", stdout=io.StringIO())
    settled()
    judged = JudgedSet.objects.select_related("answer_set__point_set").order_by("pk").first()
    assert judged is not None
    # a live-shadow cohort sealed today, and a PITFALL cohort as its tools write one
    today = market_day(timezone.now())
    live = points_services.live_cohort_create(
        user=staff, name="live-tour", title="", points=[LivePoint(
            id="close-up", question="Will the index close higher in a week?", as_of=today,
            resolves_on=today + dt.timedelta(days=7), resolution="The exchange's closes.")],
    )  # fmt: skip
    built = pitfall_build.cohort()
    uploads = [
        (f"{n}.json", io.BytesIO(json.dumps(artifact).encode()))
        for n, artifact in enumerate([built["plan"], built["public"], *built["seals"],
                                      built["suite"], built["label"], built["resolution"]])
    ]  # fmt: skip
    points_services.pitfall_artifacts_import(user=staff, uploads=uploads)
    return Seeded(
        a, b, snapshot.pk, execution.pk, judged.answer_set.point_set.name, judged.pk, live.name
    )


def _audiences(kind: PageType, submitter: User, staff: User) -> list[tuple[str, User | None]]:
    if kind.staff_only:
        return [("staff", staff)]
    audiences: list[tuple[str, User | None]] = [("submitter", submitter)]
    if not kind.signed_in_only:
        audiences.insert(0, ("visitor", None))
    if kind.staff_differs:
        audiences.append(("staff", staff))
    return audiences


def test_every_page_type_passes_axe_and_fits_its_width_signed_in_and_out(
    live_server: Any,
    browser: Any,
    seeded: Seeded,
    submitter: User,
    staff: User,
    screenshots: Path,
) -> None:
    _require_axe()
    folder = screenshots / "accessibility"
    folder.mkdir(exist_ok=True)
    problems: list[str] = []
    for width, viewport in WIDTHS.items():
        for who, user in {"visitor": None, "submitter": submitter, "staff": staff}.items():
            context = _signed_in(browser, live_server, user, viewport)
            page = context.new_page()
            for kind in PAGE_TYPES:
                if who not in dict(_audiences(kind, submitter, staff)):
                    continue
                where = f"{kind.name} ({width}, {who})"
                response = page.goto(live_server.url + kind.path(seeded))
                assert response is not None and response.status == kind.status, where
                page.wait_for_function(CHARTS_SETTLED, timeout=20_000)
                page.screenshot(path=str(folder / f"{kind.name}-{width}-{who}.png"), full_page=True)
                problems += [f"{where}: {line}" for line in _axe(page)]
                fit = page.evaluate(OVERFLOW)
                if fit["page"] > fit["width"]:
                    problems.append(
                        f"{where}: {fit['page']} px wide in a {fit['width']} px window,"
                        f" widest outside a scrolling box: {fit['wide']}"
                    )
            context.close()
    assert problems == [], "\n".join(problems)


def test_every_chart_is_a_named_image_with_its_numbers_as_a_table(
    live_server: Any, browser: Any, seeded: Seeded, screenshots: Path
) -> None:
    """Each chart (the board's, a run's, the compare page's, a release's, the points')
    is a figure named by its title whose drawing is an image of that name (the figure
    holds the mode bar's buttons, which an image may not), and aria-describedby points
    at a table of its numbers; on a phone it has no mode bar."""
    charted = ["board", "run", "compare", "release", "point-set"]
    for width, viewport in WIDTHS.items():
        context = _signed_in(browser, live_server, None, viewport)
        page = context.new_page()
        for kind in (k for k in PAGE_TYPES if k.name in charted):
            page.goto(live_server.url + kind.path(seeded))
            page.wait_for_selector("[data-figure] .main-svg", timeout=20_000)
            page.wait_for_function(CHARTS_SETTLED, timeout=20_000)
            charts = page.evaluate(
                """() => [...document.querySelectorAll("[data-figure]")].map((n) => {
                  const table = document.getElementById(n.getAttribute("aria-describedby"));
                  const drawing = n.querySelector("svg.main-svg");
                  return {figure: n.dataset.figure, role: n.getAttribute("role"),
                          name: n.getAttribute("aria-label"),
                          drawing: drawing && [drawing.getAttribute("role"),
                                               drawing.getAttribute("aria-label")],
                          table: table && table.tagName, rows: table ? table.rows.length : 0,
                          modebars: [...n.querySelectorAll(".modebar")].filter(
                            (m) => m.getBoundingClientRect().width > 0).length};
                })"""
            )
            assert charts, kind.name
            for chart in charts:
                where = f"{kind.name} {chart['figure']} ({width})"
                assert chart["role"] == "figure" and chart["name"], where
                assert chart["drawing"] == ["img", chart["name"]], where
                assert chart["table"] == "TABLE" and chart["rows"] > 1, where
                if width == "phone":
                    assert chart["modebars"] == 0, where
        context.close()


def test_the_mode_bar_shows_on_a_desktop_hover_and_never_on_a_phone(
    live_server: Any,
    browser: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    screenshots: Path,
) -> None:
    run = submit(submitter, stub_run)
    shown = {}
    for width, viewport in WIDTHS.items():
        context = _signed_in(browser, live_server, None, viewport)
        page = context.new_page()
        page.goto(live_server.url + f"/runs/{_sha(run)}/")
        chart = page.locator("[data-figure='fig-returns']")
        page.wait_for_selector("[data-figure='fig-returns'] .main-svg")
        chart.hover()
        chart.screenshot(path=str(screenshots / f"chart-modebar-{width}.png"))
        shown[width] = page.locator("[data-figure='fig-returns'] .modebar").is_visible()
        context.close()
    assert shown == {"desktop": True, "phone": False}


# The focused element, once what focus sets moving has stopped (the chart's mode bar
# fades in): what it is, and whether its focus can be seen (an outline, or a ring drawn
# as a box shadow, on an element not faded out)
FOCUSED = """async () => {
  const finite = (a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity;
  await Promise.all(document.getAnimations().filter(finite).map((a) => a.finished.catch(() => 0)));
  const e = document.activeElement, style = getComputedStyle(e);
  let shown = true;
  for (let p = e; p; p = p.parentElement) {
    if (parseFloat(getComputedStyle(p).opacity) === 0) shown = false;
  }
  const outline = shown && style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
  return {tag: e.tagName.toLowerCase(), type: e.type || "", name: e.name || "",
          text: (e.innerText || e.value || "").trim().slice(0, 40),
          href: e.getAttribute("href") || "", filter: !!e.closest("form.filters"),
          visible: outline || (shown && style.boxShadow !== "none")};
}"""


def test_the_board_is_worked_by_keyboard_with_its_focus_always_visible(
    live_server: Any,
    page: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
) -> None:
    """Tab from the top of the board: the filters, the compare button and a run's link
    are each reached, and every element focused on the way shows its focus."""
    a = submit(submitter, stub_run)
    submit(submitter, picky_run)
    page.goto(live_server.url + f"/?release={a.release.name}")
    wanted: dict[str, Callable[[dict[str, Any]], bool]] = {
        "filter": lambda s: s["filter"] and s["tag"] in ("input", "select"),
        "filter button": lambda s: s["filter"] and s["tag"] == "button",
        "compare": lambda s: s["tag"] == "button" and "Compare" in s["text"],
        "run link": lambda s: s["href"].startswith("/runs/"),
    }
    stops: list[dict[str, Any]] = []
    reached = dict.fromkeys(wanted, False)
    while not all(reached.values()) and len(stops) < 150:
        page.keyboard.press("Tab")
        stops.append(page.evaluate(FOCUSED))
        reached = {k: reached[k] or test(stops[-1]) for k, test in wanted.items()}
    assert all(reached.values()), (reached, stops)
    unseen = [s for s in stops if not s["visible"]]
    assert unseen == [], unseen


def test_the_checks_catch_a_nameless_image_and_a_page_wider_than_a_phone(
    live_server: Any, browser: Any
) -> None:
    """The tour's checks are not vacuous: an image without a text alternative is a
    critical violation, and a block wider than the window overflows the page unless a
    box around it scrolls sideways."""
    _require_axe()
    context = _signed_in(browser, live_server, None, WIDTHS["phone"])
    page = context.new_page()
    page.goto(live_server.url + "/methodology/")
    page.evaluate(
        """() => {
          const img = document.createElement("img");
          img.src = "/static/pitweb/favicon.svg";
          document.body.appendChild(img);
        }"""
    )
    assert any(line.startswith("image-alt (critical)") for line in _axe(page))
    page.evaluate(
        """() => {
          const box = document.createElement("div");
          box.id = "boxed";
          box.style.overflowX = "auto";
          box.innerHTML = '<div style="width: 900px">wide</div>';
          document.body.appendChild(box);
        }"""
    )
    fit = page.evaluate(OVERFLOW)
    assert fit["page"] <= fit["width"] and fit["wide"] == []
    page.evaluate(
        """() => {
          const wide = document.createElement("div");
          wide.id = "wide";
          wide.style.width = "900px";
          wide.textContent = "wide";
          document.body.appendChild(wide);
        }"""
    )
    fit = page.evaluate(OVERFLOW)
    assert fit["page"] > fit["width"] and "div#wide" in fit["wide"]
    context.close()
