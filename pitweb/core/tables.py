"""Every table on a page can also be had as CSV or JSON (``?format=csv|json``): one
writer for every app's tables, and one for the JSON documents the site publishes whole (its
key set, revocation list, commitment log)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from django.http import HttpResponse, JsonResponse

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A submitter's string that a spreadsheet would read as a formula (``=HYPERLINK``,
    ``+``, ``-``, ``@``, tab, carriage return) is written with a leading quote."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _cell(value: Any) -> Any:
    return csv_safe(json.dumps(value) if isinstance(value, (dict, list)) else value)


def table_response(
    fmt: str, name: str, columns: Sequence[str], rows: list[dict[str, Any]]
) -> HttpResponse | None:
    """The rows as CSV or JSON when ``fmt`` asks for it, else None (render the page)."""
    if fmt == "json":
        return JsonResponse({name: [{c: row.get(c) for c in columns} for row in rows]})
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in columns])
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        return response
    return None


def document_response(document: dict[str, Any], filename: str | None = None) -> HttpResponse:
    """A published JSON document, indented for a reader, revalidated on every fetch
    (``no-cache``); a download named ``filename`` when one is given."""
    response = HttpResponse(
        json.dumps(document, indent=1, ensure_ascii=False) + "\n", content_type="application/json"
    )
    response["Cache-Control"] = "no-cache"
    if filename:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
