"""What the leaderboard shows of a receipt body, taken once at submission.

Derived data (recomputable from the body at any time), stored beside the run so a
board of ten thousand runs never parses ten thousand receipt bodies.
"""

from __future__ import annotations

from typing import Any

from harness.vocabulary import CLOCKS


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
        "error_cells": ", ".join(errors)[:500],
        "agent_isolated": capabilities.get("agent_process") == "isolated"
        and bool(capabilities.get("network_isolated"))
        and bool(capabilities.get("filesystem_confined")),
    }
