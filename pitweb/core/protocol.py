"""The wire protocol's published schemas, served at stable URLs: what an entrant writes an
external agent against (``harness.protocol``: closed JSON Schemas per dialect, generated
from the types the harness reads messages with, and our dialect's operations table)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from harness.protocol import pit
from harness.protocol.schemas import HERE, PUBLISHED

OPERATIONS = ("pit", "operations.json")


@cache
def _files() -> dict[tuple[str, str], bytes]:
    names = [(dialect, name) for dialect, name, *_ in PUBLISHED] + [OPERATIONS]
    return {(dialect, name): (HERE / dialect / name).read_bytes() for dialect, name in names}


@require_GET
def protocol_index(request: HttpRequest) -> JsonResponse:
    """Every published file of every dialect, with its URL and what it is."""
    listed: list[dict[str, Any]] = [
        {
            "dialect": dialect,
            "name": name,
            "title": title,
            "description": description,
            "url": request.build_absolute_uri(reverse("protocol-file", args=[dialect, name])),
        }
        for dialect, name, _, title, description in PUBLISHED
    ]
    listed.append(
        {
            "dialect": "pit",
            "name": OPERATIONS[1],
            "title": "operations",
            "description": "Of each pit message: whether it changes state, is safe to repeat "
            "and may be retried.",
            "url": request.build_absolute_uri(reverse("protocol-file", args=list(OPERATIONS))),
        }
    )
    return JsonResponse({"pit_version": pit.VERSION, "files": listed})


@require_GET
def protocol_file(request: HttpRequest, dialect: str, name: str) -> HttpResponse:
    data = _files().get((dialect, name))
    if data is None:
        raise Http404("no such published schema")
    kind = "application/json" if name == OPERATIONS[1] else "application/schema+json"
    response = HttpResponse(data, content_type=kind)
    response["Access-Control-Allow-Origin"] = "*"  # a schema is for anyone's validator
    response["Cache-Control"] = "public, max-age=3600"
    return response
