"""The layout in a real browser: on a phone the menu folds behind a button the keyboard
reaches, no page is wider than the screen, and a table wider than its frame says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore

from tests.e2e.test_site import submit
from tests.pitweb.conftest import Artifacts

PHONE = {"width": 390, "height": 844}
# every element's right edge, but for what scrolls in a frame of its own
WIDER_THAN_SCREEN = """() => {
  const w = window.innerWidth, out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.table-wrap, .scroll, pre, .chart, details:not([open])')) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1) out.push(el.tagName + ' ' + Math.round(r.right));
  }
  return out;
}"""


def test_on_a_phone_the_menu_folds_and_the_keyboard_opens_it(
    live_server: Any, page: Any, screenshots: Path
) -> None:
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/methodology/")
    menu = page.locator("nav[aria-label=Main]")
    assert not menu.get_by_role("link", name="Changelog").is_visible()
    page.keyboard.press("Tab")  # the skip link first, then the brand, then the menu
    assert page.evaluate("document.activeElement.getAttribute('href')") == "#main"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert menu.get_by_role("link", name="Changelog").is_visible()
    page.screenshot(path=str(screenshots / "menu-phone-open.png"))
    assert page.evaluate(WIDER_THAN_SCREEN) == []


def test_on_a_wide_screen_the_menu_is_open_without_a_button(live_server: Any, page: Any) -> None:
    page.goto(live_server.url + "/status/")
    menu = page.locator("nav[aria-label=Main]")
    assert menu.get_by_role("link", name="Status").get_attribute("aria-current") == "page"
    assert not menu.locator("summary").is_visible()
    assert menu.get_by_role("link", name="Changelog").is_visible()


def test_the_pages_fit_a_phone_and_a_wide_table_says_it_scrolls(
    live_server: Any,
    page: Any,
    registered: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    screenshots: Path,
) -> None:
    run = submit(submitter, stub_run)
    sha = run.body_sha256[7:]
    page.set_viewport_size(PHONE)
    page.context.add_cookies(
        [{"name": "sessionid", "value": _session(staff), "url": live_server.url}]
    )
    for path in (
        "/agents/",
        "/compare/",
        f"/compare/?runs={sha}",
        f"/runs/{sha}/",
        "/status/",
        "/points/",
        "/changelog/",
        "/methodology/",
    ):
        page.goto(live_server.url + path)
        assert page.evaluate(WIDER_THAN_SCREEN) == [], path
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
    page.goto(live_server.url + f"/runs/{sha}/")
    page.screenshot(path=str(screenshots / "run-phone-staff.png"), full_page=True)
    history = page.locator(".table-wrap:has(#jobs)")  # wider than a phone
    assert history.get_attribute("data-overflowing") == ""
    assert "Scroll sideways" in history.evaluate(
        "(frame) => getComputedStyle(frame, '::before').content"
    )


def _session(user: User) -> str:
    """A signed-in session for ``user``, as the site's sign-in would leave it."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return str(store.session_key)
