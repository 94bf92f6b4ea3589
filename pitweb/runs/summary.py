"""What the leaderboard shows of a receipt body, taken once at submission.

Derived data (recomputable from the body at any time), stored beside the run so a
board of ten thousand runs never parses ten thousand receipt bodies.
"""

from __future__ import annotations

from typing import Any

from harness.vocabulary import CLOCKS

# Where a receipt body's strings land in bounded columns: the column ("app.Model.field")
# and the schema leaves it is made of (as ``harness.receipt.schemas.leaf_paths`` names them). One
# leaf is stored as is; several are composed by ``run_facts``. A test holds each leaf's
# schema bound at or below its column's, so an upload too long for a column is refused by
# the schema (a 400 naming the field) before anything is written. A body string in no
# bounded column (an answer, the forms) is stored in a text or JSON column.
BODY_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs.Run.run_id": (".run_id",),
    # the registered release the body's digest names
    "runs.Run.release_digest": (".binding.bundle_content_digest",),
    "runs.Run.trajectory_sha256": (".binding.trajectory_sha256",),
    "runs.Run.agent": (".config.agent",),
    "runs.Run.model_version": (".config.model_version",),
    "runs.Run.mask_verdict": (".probe.verdict",),
    "runs.Run.error_cells": (".cells[].arm", ".cells[].clock", ".cells[].status", ".probe.status"),
}


def body_summary(body: dict[str, Any]) -> dict[str, Any]:
    main = {c["clock"]: c["total_return"] for c in body.get("cells", []) if c["arm"] == "main"}
    contamination = body.get("contamination", {})
    probe = body.get("probe", {})
    return {
        **{f"main_{clock}": main.get(clock) for clock in CLOCKS},
        **{
            f"delta_shifted_{clock}": (contamination.get(clock) or {}).get("main_minus_shifted")
            for clock in CLOCKS
        },
        **{
            f"delta_redacted_{clock}": (contamination.get(clock) or {}).get("main_minus_redacted")
            for clock in CLOCKS
        },
        "mask_verdict": probe.get("verdict", "not_run"),
        "probe_recovered": f"{probe.get('recovered', 0)}/{probe.get('total', 0)}",
        "protocol_gaps": ",".join(body.get("protocol_gaps", [])),
    }


ERROR_STATUSES = ("agent_error", "harness_error", "incomplete")


def run_facts(body: dict[str, Any]) -> dict[str, Any]:
    """What the board filters and sorts runs apart by, read off the body."""
    capabilities = body.get("capabilities") or {}
    errors = [
        f"{c['arm']}/{c['clock']} {c['status']}"
        for c in body.get("cells", [])
        if c.get("status") in ERROR_STATUSES
    ]
    probe_status = (body.get("probe") or {}).get("status")
    if probe_status in ("harness_error", "incomplete"):
        errors.append(f"probe {probe_status}")
    return {
        "mask_verdict": (body.get("probe") or {}).get("verdict") or "not_run",
        "error_cells": ", ".join(errors),
        "agent_isolated": capabilities.get("agent_process") == "isolated"
        and bool(capabilities.get("network_isolated"))
        and bool(capabilities.get("filesystem_confined")),
    }
