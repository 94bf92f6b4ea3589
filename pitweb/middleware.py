"""Input no page can use is refused before any view sees it."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, JsonResponse

from pitweb.core.errors import error_body


def _unreadable(raw: str) -> str | None:
    """Why a path or query string is refused: a NUL byte, or bytes that are not UTF-8."""
    try:
        text = unquote_to_bytes(raw.replace("+", " ")).decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8"
    return "holds a NUL byte" if "\x00" in text else None


class RefuseUnreadableInput:
    """A NUL byte or undecodable bytes in the path, the query string or a posted form
    field is a 400 (the JSON envelope under /api/): no database is ever asked to store or
    match them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = None
        path = request.META.get("PATH_INFO", "")
        if "\x00" in path or "%00" in path:
            problem = "the path holds a NUL byte"
        elif why := _unreadable(request.META.get("QUERY_STRING", "")):
            problem = f"the query string {why}"
        elif request.method == "POST" and request.content_type == (
            "application/x-www-form-urlencoded"
        ):
            body = request.body.decode("latin-1")
            if why := _unreadable(body):
                problem = f"a form field {why}"
        if problem is None:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse(error_body("unreadable_input", problem), status=400)
        from django.shortcuts import render

        return render(request, "400.html", {"message": f"Bad request: {problem}."}, status=400)
