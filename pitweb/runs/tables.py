"""The run pages' tables (cells, probe, jobs) and the changelog's: their columns and rows,
written as CSV or JSON by ``pitweb.core.tables``."""

from __future__ import annotations

from typing import Any

from harness.receipt.model import Probe

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
