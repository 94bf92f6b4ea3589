"""The home page: what the site is, its benchmarks (the board's), its point sets (the
points app's), the latest verified runs and how to submit. It sits above the apps,
as the URLs do: the board never imports points."""

from __future__ import annotations

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
    if any(name in request.GET for name in BOARD_PARAMS):
        return redirect(reverse("leaderboard") + "?" + request.GET.urlencode(), permanent=True)
    sets = point_sets().values("name", "title")
    return render(request, "home.html", home_summary() | {"point_sets": list(sets)})
