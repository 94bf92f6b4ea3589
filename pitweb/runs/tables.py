"""Every table on a page can also be had as CSV or JSON (``?format=csv|json``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from django.http import HttpResponse, JsonResponse

from harness.receipt.model import Probe

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


CELL_COLUMNS = (
    "arm",
    "clock",
    "reachable",
    "status",
    "sessions",
    "trades",
    "priced_trades",
    "total_return",
    "rejected_picks",
    "agent_errors",
    "tool_calls",
    "rows_served",
    "pit_fallbacks_served",
    "trades_sha256",
)
PROBE_COLUMNS = (
    "item",
    "row_key",
    "answer",
    "date_recovered",
    "year_recovered",
    "issuer_recovered",
    "matched",
    "answer_dates",
    "answer_issuer",
    "answer_ticker",
)
JOB_COLUMNS = (
    "job",
    "kind",
    "state",
    "requested_by",
    "reason",
    "worker",
    "attempts",
    "created_at",
    "started_at",
    "finished_at",
    "mismatch_check",
    "message",
    "changed",
)
EVENT_COLUMNS = ("when", "action", "run", "actor", "reason")


def probe_rows(probe: Probe) -> list[dict[str, Any]]:
    return [
        {
            "item": item.item,
            "row_key": item.row_key,
            "answer": item.answer,
            "date_recovered": item.score.date_recovered,
            "year_recovered": item.score.year_recovered,
            "issuer_recovered": item.score.issuer_recovered,
            "matched": ";".join(item.score.matched),
            "answer_dates": ";".join(item.answer_key.dates),
            "answer_issuer": item.answer_key.issuer,
            "answer_ticker": item.answer_key.ticker,
        }
        for item in probe.items
    ]


def job_rows(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for entry in history:
        job = entry["job"]
        out.append(
            {
                "job": job.pk,
                "kind": job.kind,
                "state": job.state,
                "requested_by": job.requested_by.username if job.requested_by else None,
                "reason": job.reason,
                "worker": job.worker,
                "attempts": job.attempts,
                "created_at": job.created_at.isoformat(),
                "started_at": job.started_at.isoformat() if job.started_at else None,
                "finished_at": job.finished_at.isoformat() if job.finished_at else None,
                "mismatch_check": job.mismatch_check,
                "message": job.message,
                "changed": "; ".join(entry["changed"]),
            }
        )
    return out
