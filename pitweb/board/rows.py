"""A board row as shown: a run's figures and, in words, its standing (``leaderboard_row``),
and why a run is kept apart from the ranking (``apart_row``). Display only: which runs a
board holds is ``query``."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from pitweb.runs.models import Run
from pitweb.runs.presentation import (
    LEVEL_SHORT,
    could_read_future,
    cutoff_words,
    isolation_words,
    level_words,
    model_cost,
    platform_numbers,
    run_attempts,
)

APART_TITLES = (
    ("unranked", "Not ranked yet: no platform figure, or too few trades"),
    ("mask_leaks", "Mask leaks: control void"),
    ("errors", "Cells that did not complete"),
    ("failed", "Failed verification"),
    ("pending", "Pending verification"),
    ("invalid", "Invalid (network egress or aborted)"),
)


def leaderboard_row(run: Run) -> dict[str, Any]:
    """A board row. Numbers only for a run whose numbers were proved: the platform
    figures (every run priced with its release's reference prices) and, labelled, the
    receipt's self-reported ones. Any other run says why its numbers are withheld (the
    failed check by name, or pending)."""
    numbers: dict[str, Any] = (
        {
            **platform_numbers(run),
            **{
                f"self_reported_{k}": v
                for k, v in run.summary.items()
                if k.startswith(("main_", "delta_"))
            },
            **model_cost(run),
            "mask_verdict": run.summary.get("mask_verdict"),
            "probe_recovered": run.summary.get("probe_recovered"),
            "numbers": "proven",
        }
        if run.proven
        else {"numbers": "withheld", "withheld_because": run.withheld_reason}
    )
    return {
        "run_id": run.run_id,
        "body_sha256": run.body_sha256,
        "submission": run.pk,
        "submitter": run.submitter.username,
        "benchmark": run.benchmark.key if run.benchmark else None,
        "benchmark_name": run.benchmark.name if run.benchmark else None,
        "release": run.release.name if run.release else run.release_digest,
        "forms": run.forms,
        "window": f"{run.window_start}..{run.window_end}",
        "agent": run.agent,
        "model_version": run.model_version or None,
        "training_cutoff": run.training_cutoff or None,
        "cutoff_relation": run.cutoff_relation or None,
        "cutoff_words": cutoff_words(run),
        "forward_tested": run.forward_tested,
        "baseline": run.is_baseline,
        "attempts": run_attempts(run),
        "family": run.family_id,
        "family_page": reverse("family", args=[run.family_id]) if run.family_id else None,
        **numbers,
        "protocol_gaps": run.summary.get("protocol_gaps", ""),
        "error_cells": run.error_cells,
        "failed_check": run.failed_check if run.status == "mismatch" else "",
        "verification": run.status,
        "verification_level": run.verification_level,
        "verification_level_words": level_words(run),
        "verification_level_short": LEVEL_SHORT.get(run.verification_level, ""),  # type: ignore[call-overload]
        "agent_isolated": run.agent_isolated,
        "isolation": isolation_words(run),
        "could_read_future_data": could_read_future(run),
        "valid": run.valid,
        "protocol_complete": run.protocol_complete,
        "flag": run.flag,
        "withdrawn": run.withdrawn_at is not None,
        "submitted_at": run.submitted_at.isoformat(),
    }


def apart_row(section: str, run: Run) -> dict[str, Any]:
    row = leaderboard_row(run)
    if section == "unranked":
        row["why_apart"] = row.get("platform_status", "")
    elif section == "mask_leaks":
        row["why_apart"] = "the mask probe recovered real dates: the shifted arm's control is void"
    elif section == "errors":
        row["why_apart"] = f"cells that did not complete: {run.error_cells}"
    elif section == "invalid":
        row["why_apart"] = "invalid: network egress or aborted"
    else:
        row["why_apart"] = row.get("withheld_because", "")
    return row
