"""The home page: what the site is, its benchmarks (the board's), its point sets (the
points app's), the latest verified runs and how to submit. It sits above the apps,
as the URLs do: the board never imports points."""

from __future__ import annotations

from urllib.parse import parse_qsl

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from pitweb.board.filters import BOARD_PARAMS
from pitweb.board.home import home_summary
from pitweb.points.selectors import point_sets


def home_page(request: HttpRequest) -> HttpResponse:
    """The home page. An old board address (``/?release=...``, when the board was the
    home page) is sent to the boards with its query, which send it on to the one
    benchmark it names."""
    # the query is sent on as it came, unread: the boards' own reader judges it (a bad
    # page is their 400, not a guess of ours here)
    query = request.META.get("QUERY_STRING", "")
    if any(name in BOARD_PARAMS for name, _ in parse_qsl(query, keep_blank_values=True)):
        return redirect(reverse("leaderboard") + "?" + query, permanent=True)
    sets = point_sets().values("name", "title")
    return render(request, "home.html", home_summary() | {"point_sets": list(sets)})
