"""One layout for every page: a skip link, a menu that reaches every public section, the
account links, a footer; words instead of snake_case and times to the second in what a
visitor reads; an empty compare page that says how to pick runs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from harness.points.metrics import CLASSES
from pitweb.runs.templatetags.pitweb_extras import agent, clip, when
from tests.pitweb.conftest import submit_run
from tests.support.data import shared_path

pytestmark = pytest.mark.django_db

PUBLIC_SECTIONS = (
    "leaderboard",
    "compare",
    "point-sets",
    "agents",
    "releases",
    "snapshots",
    "methodology",
    "api-docs",
    "status",
    "changelog",
)
MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}[.,]\d{1,6}")
SNAKE_CLASSES = re.compile("|".join(c for c in CLASSES if "_" in c))


class _Page(HTMLParser):
    """A page's visible words (no script, style or attribute, and no data quoted as
    it is stored: ``pre`` and ``code``) and the menu's links."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.menu: list[str] = []
        self.skip = 0
        self.in_menu = False
        self.landmarks: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in ("script", "style", "pre", "code"):
            self.skip += 1
        if tag == "nav" and attributes.get("aria-label") == "Main":
            self.in_menu = True
        if tag == "a" and self.in_menu:
            self.menu.append(attributes.get("href") or "")
        if tag in ("main", "header", "footer", "nav"):
            self.landmarks.add(f"{tag}#{attributes.get('id') or ''}")
        if tag == "a" and attributes.get("href") == "#main":
            self.landmarks.add("skip-link")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "pre", "code"):
            self.skip -= 1
        if tag == "nav":
            self.in_menu = False

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.text.append(data)


def _read(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _visible(client: Client, url: str) -> str:
    answer = client.get(url)
    assert answer.status_code == 200, url
    return " ".join(_read(answer.content.decode()).text)


# -- the layout -----------------------------------------------------------------------------


def test_the_menu_links_every_public_section() -> None:
    page = _read(Client().get("/methodology/").content.decode())
    for name in PUBLIC_SECTIONS:
        assert reverse(name) in page.menu, name


def test_every_page_has_a_skip_link_a_main_landmark_and_a_footer() -> None:
    page = _read(Client().get("/status/").content.decode())
    assert {"skip-link", "main#main", "footer#"} <= page.landmarks


def test_the_current_section_is_marked_in_the_menu() -> None:
    html = Client().get("/points/").content.decode()
    assert f'href="{reverse("point-sets")}" aria-current="page"' in html
    assert html.count('aria-current="page"') == 1


def test_the_admin_login_is_never_linked_from_a_page() -> None:
    html = Client().get("/status/").content.decode()
    assert "/admin/login" not in html


def test_a_signed_in_visitor_sees_their_name_and_a_sign_out_button(submitter: User) -> None:
    client = Client()
    client.force_login(submitter)
    html = client.get("/status/").content.decode()
    assert submitter.username in html and "Sign out" in html


# -- compare ----------------------------------------------------------------------------------


def test_an_empty_compare_page_says_how_to_pick_runs() -> None:
    html = Client().get("/compare/").content.decode()
    text = " ".join(_read(html).text)
    assert "How to pick runs to compare" in text and "Compare checked runs" in text
    assert "<table" not in html  # no empty table


def test_a_compare_page_naming_only_unknown_runs_still_says_how_to_pick_them() -> None:
    html = Client().get("/compare/?runs=ffffffffffffffff,<b>x</b>").content.decode()
    assert "names no run you can see" in html and "How to pick runs" in html
    assert "<b>x</b>" not in html  # escaped, never markup


# -- words and times ------------------------------------------------------------------------


def test_the_points_pages_say_error_classes_in_words_and_times_to_the_second() -> None:
    points = shared_path("data", "pitfall", "points")
    [results] = sorted(shared_path("data", "pitfall", "results").glob("*.json"))
    call_command("import_pitfall", "--points", str(points), "--results", str(results))
    client = Client()
    set_page = client.get("/points/pitfall-public/").content.decode()
    judged = re.search(r"/points/pitfall-public/judged/(\d+)/", set_page)
    assert judged is not None
    for url in ("/points/", "/points/pitfall-public/", judged.group(0)):
        text = _visible(client, url)
        assert not SNAKE_CLASSES.search(text), (url, SNAKE_CLASSES.search(text))
        assert not MICROSECONDS.search(text), (url, MICROSECONDS.search(text))
    assert "Numeric factual error" in _visible(client, "/points/pitfall-public/")


def test_the_run_pages_show_no_microseconds_and_no_snake_case_states(
    registered: Any, submitter: User, stub_run: Any
) -> None:
    run = submit_run(submitter, stub_run)
    client = Client()
    for url in (
        f"/runs/{run.body_sha256[7:]}/",
        "/status/",
        "/changelog/",
        f"/compare/?runs={run.body_sha256[7:]}",
    ):
        text = _visible(client, url)
        assert not MICROSECONDS.search(text), (url, MICROSECONDS.search(text))
        for raw in ("harness_error", "mask_holds", "mask_leaks", "hashes_verified"):
            assert raw not in text, (url, raw)


def test_a_time_is_shown_to_the_second_in_utc() -> None:
    paris = timezone(timedelta(hours=1))
    assert when(datetime(2023, 3, 1, 15, 4, 5, 123456, tzinfo=paris)) == "2023-03-01 14:04:05 UTC"
    assert when("2023-03-01T14:04:05.999999+00:00") == "2023-03-01 14:04:05 UTC"
    assert when(datetime(2023, 3, 1, tzinfo=UTC).date()) == "2023-03-01"
    assert when(None) == "—" and when("not a time") == "not a time"


def test_an_agent_shows_its_name_with_its_module_path_on_hover() -> None:
    html = str(agent("harness.agents.baselines:earliest_five"))
    assert ">earliest five<" in html and 'title="harness.agents.baselines:earliest_five"' in html
    assert str(agent("stub")) == "stub"


def test_a_hostile_agent_name_is_escaped_not_rendered() -> None:
    html = str(agent('x.y:"><script>alert(1)</script>'))
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_long_label_is_cut_at_a_word_boundary_with_the_whole_label_on_hover() -> None:
    label = "harness.agents.baselines:earliest_five run-20230301-20230310"
    html = str(clip(label, 30))
    shown = html.split(">", 1)[1].rsplit("…", 1)[0]
    assert label.startswith(shown) and label[len(shown)] in " _-.:/,"
    assert f'title="{label}"' in html
    assert str(clip("short", 30)) == "short"


def test_the_stylesheet_defines_tokens_and_focus_styles() -> None:
    css = (Path(__file__).resolve().parents[3] / "static" / "pitweb" / "site.css").read_text()
    for token in ("--c-text", "--c-accent", "--sp-4", "--fs-md", "--radius"):
        assert f"{token}:" in css
    assert ":focus-visible" in css and ".table-wrap" in css and ".empty" in css
