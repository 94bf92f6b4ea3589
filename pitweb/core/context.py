"""What every page's layout needs: the menu (each public section, the current one
marked), the account links and the footer's. A section whose page is not installed
is left out of the menu rather than breaking every page."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

# (words, URL names tried in order): the first that resolves is the section's page
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Benchmarks", ("leaderboard",)),
    ("Compare", ("compare",)),
    ("Points", ("point-sets",)),
    ("Agents", ("agents",)),
    ("Forward track", ("forward",)),
    ("Releases", ("releases",)),
    ("Snapshots", ("snapshots",)),
    ("Methodology", ("methodology",)),
    ("API", ("api-docs",)),
    ("Status", ("status",)),
    ("Changelog", ("changelog",)),
)


def url_or_none(*names: str) -> str | None:
    """The path of the first URL name that resolves (without arguments), or None."""
    for name in names:
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return None


def _current(path: str, url: str, home: str | None) -> bool:
    """A section is current on its own page and on the pages under it; the home page
    only on itself."""
    if url == home:
        return path == url
    return path == url or path.startswith(url)


def site(request: HttpRequest) -> dict[str, Any]:
    home = url_or_none("home", "leaderboard")
    menu = []
    for words, names in SECTIONS:
        url = url_or_none(*names)
        if url is not None:
            menu.append({"words": words, "url": url, "current": _current(request.path, url, home)})
    return {
        "site_menu": menu,
        "site_home_url": home or "/",
        "site_login_url": url_or_none("login"),
        "site_account_url": url_or_none("account"),
        "site_source_url": getattr(settings, "PITWEB_SOURCE_URL", ""),
    }
