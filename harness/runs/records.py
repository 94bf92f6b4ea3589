"""Cell records: one cell run on its own (``runner.run_cell``, a worker's job), what it
leaves (``CellRecord``), and how records are joined into one run (``runner.assemble``):
checked to be the run's cells, once each, under its config, and written into the run's
trajectory as if run there; the capabilities claimed are the weakest of their sandboxes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from harness import outcomes
from harness.isolation.drivers import capability_line
from harness.isolation.guard import EgressAttempt
from harness.runs.cells import session_toolbox
from harness.runs.state import Aborted, CellOutcome, RunContext
from harness.tools.toolbox import ArmRows, ClockIndex, Toolbox


class CellRecord(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One cell run on its own (:func:`run_cell`), everything :func:`assemble` needs to
    write it into the run as the runner would have: its trajectory events in order
    (``seq`` counted from 0 within the cell), its outcome, what its failed attempts left,
    its egress, the rows it served (the probe draws from the shifted arm's) and the
    capabilities its sandbox measured."""

    arm: str
    clock: str
    config_sha256: str  # the run's scoring config as resolved: a record joins only its run
    events: str  # canonical lines
    outcome: dict[str, Any]
    ledger: list[dict[str, Any]]
    egress: list[dict[str, Any]]
    model_exchanges: dict[str, int]
    served: list[int]
    capabilities: dict[str, Any]
    aborted: str | None = None
    wire: list[dict[str, Any]] = []  # what the cell's wire saw (each with its cell and time)


class AssemblyError(ValueError):
    """Cell records that do not make one run (missing, repeated, or of another config)."""


def records_by_cell(
    records: Sequence[CellRecord], cells: list[tuple[str, str]]
) -> dict[tuple[str, str], CellRecord]:
    """The records by their cell, refused unless they are ``cells`` (a run's, in its
    order), each once."""
    by_cell: dict[tuple[str, str], CellRecord] = {}
    for record in records:
        key = (record.arm, record.clock)
        if key in by_cell:
            raise AssemblyError(f"cell {record.arm}/{record.clock}: given twice")
        by_cell[key] = record
    missing = [f"{a}/{c}" for a, c in cells if (a, c) not in by_cell]
    extra = sorted(f"{a}/{c}" for a, c in by_cell if (a, c) not in cells)
    if missing or extra:
        raise AssemblyError(
            f"cells missing: {missing or 'none'}; not of this run: {extra or 'none'}"
        )
    return by_cell


def outcome_json(outcome: CellOutcome) -> dict[str, Any]:
    fields = dataclasses.asdict(outcome)
    fields["fault"] = None if outcome.fault is None else vars(outcome.fault)
    return fields


def outcome_of(fields: dict[str, Any]) -> CellOutcome:
    fault = fields["fault"]
    return CellOutcome(
        **{
            **fields,
            "picks": [(s, list(keys)) for s, keys in fields["picks"]],
            "fault": None if fault is None else outcomes.Fault(fault["kind"], fault["message"]),
        }
    )


def check_records(recorded: dict[tuple[str, str], CellRecord], config_sha: str) -> None:
    for (arm, clock), record in recorded.items():
        if record.config_sha256 != config_sha:
            raise AssemblyError(
                f"cell {arm}/{clock}: run under config {record.config_sha256}, "
                f"this run's is {config_sha}"
            )


def weakest(own: dict[str, Any], others: list[dict[str, Any]]) -> dict[str, Any]:
    """The capabilities every sandbox had: a guarantee held by all of them or by none.
    Anything but a yes/no must be the same everywhere."""
    merged = dict(own)
    for other in others:
        for key in merged.keys() | other.keys():
            if key == "line":
                continue
            mine, theirs = merged.get(key), other.get(key)
            if isinstance(mine, bool) and isinstance(theirs, bool):
                merged[key] = mine and theirs
            elif mine != theirs:
                raise AssemblyError(
                    f"the cells ran in different sandboxes: {key} is {theirs!r} in one, "
                    f"{mine!r} here"
                )
    merged["line"] = capability_line(merged)
    return merged


def recorded_cell(
    ctx: RunContext,
    cells: dict[tuple[str, str], CellOutcome],
    record: CellRecord,
    index: ClockIndex,
    rows: ArmRows,
    served: dict[int, None],
) -> tuple[CellOutcome, Toolbox | None]:
    """A cell run elsewhere (:func:`run_cell`), written into this run as if run here;
    its toolbox rebuilt at the session it ended on, for the probe."""
    for line in record.events.splitlines():
        event = json.loads(line)
        ctx.writer.write(str(event.pop("event")), **event)
    outcome = cells[(record.arm, record.clock)] = outcome_of(record.outcome)
    ctx.ledger += record.ledger
    ctx.egress += [
        EgressAttempt(e["call"], e["target"], e["site"], tuple(e["stack"])) for e in record.egress
    ]
    ctx.wire += record.wire
    for endpoint, count in record.model_exchanges.items():
        ctx.model_exchanges[endpoint] = ctx.model_exchanges.get(endpoint, 0) + count
    if record.aborted is not None:
        raise Aborted(record.aborted)
    for position in record.served:
        served.setdefault(position)
    if outcome.last_session is None:
        return outcome, None
    return outcome, session_toolbox(ctx, outcome, index, rows, outcome.last_session, {})
