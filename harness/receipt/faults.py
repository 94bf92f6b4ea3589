"""The receipt's ``fault_injection``: what a run's fault plan did, gathered from the
``fault_event`` events its cells wrote, with each fault's denominators (cells run, cells
assigned, cells where it fired). The faults assigned to a cell are drawn again from the
plan (pure draws), so ``verify`` re-derives the whole block from the trajectory and the
config. Rank-neutral: nothing here enters a return, a figure or a rank."""

from __future__ import annotations

from typing import Any

from harness.rundata.faultplan import (
    FaultPlan,
    cell_coordinates,
    cohort,
    plan_from_record,
)

REPORT_VERSION = "pit-harness.fault-injection-report.v1"
# what an event carries that the report keeps apart (its cell) or leaves out
_CELL_KEYS = ("event", "seq", "arm", "clock")


def fault_report(
    plan: FaultPlan | dict[str, Any],
    cells: list[tuple[str, str]],
    sessions: list[str],
    events: list[dict[str, Any]],
) -> dict[str, Any]:
    """The report of ``plan`` over a run's ``cells`` (in the runner's order) walked over
    ``sessions``, from the cells' ``fault_event`` events (as written, or as read back)."""
    plan = plan if isinstance(plan, FaultPlan) else plan_from_record(plan)
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for event in events:
        key = (str(event.get("arm")), str(event.get("clock")))
        by_cell.setdefault(key, []).append({k: v for k, v in event.items() if k not in _CELL_KEYS})
    evidence = []
    assigned_in: dict[str, int] = {}
    fired_in: dict[str, int] = {}
    for arm, clock in cells:
        start, end, seed = cell_coordinates(arm, clock, sessions)
        assigned = [f.id for f in cohort(plan, (start, end, seed))]
        seen = by_cell.get((arm, clock), [])
        for fault_id in assigned:
            assigned_in[fault_id] = assigned_in.get(fault_id, 0) + 1
        for fired in dict.fromkeys(str(e.get("fault_id")) for e in seen):
            fired_in[fired] = fired_in.get(fired, 0) + 1
        if assigned or seen:
            evidence.append(
                {
                    "arm": arm,
                    "clock": clock,
                    "window_start": start,
                    "window_end": end,
                    "seed": seed,
                    "assigned": assigned,
                    "events": seen,
                }
            )
    return {
        "schema_version": REPORT_VERSION,
        "rank_neutral": True,
        "plan_sha256": plan.sha256,
        "declared_relaxations": list(plan.declared_relaxations),
        "entrant_declaration": plan.declaration(),
        "denominators": [
            {
                "fault_id": f.id,
                "cells": len(cells),
                "assigned": assigned_in.get(f.id, 0),
                "fired": fired_in.get(f.id, 0),
            }
            for f in plan.faults
        ],
        "evidence": evidence,
    }
