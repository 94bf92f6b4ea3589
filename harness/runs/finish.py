"""Finishing a run: every cell scored from its picks (its trades made with the run's
prices), the receipt's body assembled from what the run bound, read and produced, and the
receipt written beside the trajectory; what the caller gets back is a ``RunResult``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from harness import outcomes
from harness.market.clocks import REACHABLE, knowable_before_acceptance
from harness.market.scoring import (
    Trade,
    add_by_form,
    entered_before_acceptance,
    make_trades,
    total_return,
    trades_digest,
)
from harness.receipt import model
from harness.receipt.build import (
    Bound,
    Outcome,
    WindowRead,
    build_body,
    measured_fields,
    write_receipt,
)
from harness.receipt.faults import fault_report
from harness.receipt.usage import trajectory_usage
from harness.runs.inputs import Inputs, Started, Window
from harness.runs.state import CellOutcome, Grid, RunContext


@dataclass
class RunResult:
    receipt: dict[str, Any]
    trajectory_path: Path
    receipt_path: Path
    cells: dict[tuple[str, str], CellOutcome]
    # Trades are rebuilt from the picks when asked for, not kept: a whole-release run
    # makes millions of them.
    _trader: Callable[[CellOutcome], list[Trade]] = field(repr=False)
    _main_rows: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.receipt["body"]
        return body

    @property
    def valid(self) -> bool:
        return bool(self.body["valid"])

    @property
    def agent_failed(self) -> bool:
        """The agent failed somewhere (a cell, a session or the probe): exit code 4."""
        probe = self.body["probe"]
        return any(
            c["status"] == outcomes.AGENT_ERROR or c["agent_errors"] for c in self.body["cells"]
        ) or bool(probe.get("agent_errors") or probe.get("status") == outcomes.AGENT_ERROR)

    @property
    def harness_failed(self) -> bool:
        """A cell or the probe ran out of attempts on our side: exit code 3."""
        return outcomes.HARNESS_ERROR in self._statuses()

    @property
    def incomplete(self) -> bool:
        """The agent's process exited in every attempt of a cell or the probe: exit 4."""
        return outcomes.INCOMPLETE in self._statuses()

    def _statuses(self) -> set[str]:
        return {c["status"] for c in self.body["cells"]} | {self.body["probe"].get("status")}

    def total_return(self, arm: str, clock: str) -> float | None:
        return total_return(self.trades(arm, clock))

    def trades(self, arm: str, clock: str) -> list[Trade]:
        return self._trader(self.cells[(arm, clock)])

    def main_row(self, row_key: str) -> dict[str, Any]:
        """The facts of a main-arm row of the window (dates, form, acceptance stamp)."""
        return self._main_rows[row_key]


@dataclass(frozen=True)
class Ran:
    """A run whose trajectory is closed: everything its receipt is built from."""

    inputs: Inputs
    window: Window
    started: Started
    grid: Grid
    ctx: RunContext
    trajectory_sha256: str
    capabilities: dict[str, Any]  # as the sandbox measured them (and the cells', weakest)
    network: dict[str, Any]  # the drivers' network block: egress and the model's traffic


@dataclass(frozen=True)
class CellScore:
    """A cell's trades and its clock counts, as its receipt entry reports them."""

    trades: list[Trade]
    entered_early: int  # trades entered before the filing's acceptance
    knowable_early: int  # rows the clock makes knowable before their acceptance
    ignored_orders: int | None = None  # a dialect that counts them (sharpebench's)
    usage: model.CellUsage | None = None  # a run that declared model endpoints


def finish(ran: Ran) -> RunResult:
    """Score every cell from its picks and write the receipt."""
    inputs, window, grid, ctx, started = ran.inputs, ran.window, ran.grid, ran.ctx, ran.started
    config = inputs.config
    table, facts = window.table, window.facts

    def trader(outcome: CellOutcome) -> list[Trade]:
        return make_trades(
            outcome.picks,
            main_by_key=window.main_by_key,
            table=table,
            hold_sessions=config.hold_sessions,
            prices=inputs.prices,
        )

    cells = []
    by_form: dict[str, dict[str, Any]] = {}
    knowable_early = {clock: knowable_before_acceptance(facts, clock) for clock in config.clocks}
    last_bell = table.opens[window.sessions[-1]]
    # a run with model endpoints: each cell's usage, read from the closed trajectory as a
    # verifier reads it
    usage = (
        trajectory_usage(config.trajectory_path).blocks(list(grid.cells))
        if config.model_endpoints
        else None
    )
    for (arm, clock), outcome in grid.cells.items():
        outcome.unreached_rows = len(facts) - window.indexes[clock].knowable(last_bell)
        trades = trader(outcome)
        entered_early = entered_before_acceptance(outcome.picks, window.main_by_key, table)
        ignored = outcome.ignored_orders if ctx.dialect.reports_ignored_orders else None
        used = None if usage is None else usage[(arm, clock)]
        score = CellScore(trades, entered_early, knowable_early[clock], ignored, used)
        measured = measured_fields(
            trades,
            costs=config.costs,
            index=inputs.index,
            prices=inputs.prices,
            table=table,
            hold_sessions=config.hold_sessions,
        )
        cells.append(cell_summary(outcome, score, measured))
        add_by_form(by_form, f"{arm}/{clock}", trades)

    trajectory = model.Trajectory(
        path=Path(config.trajectory_path).name,
        events=ctx.writer.events,
        sha256=ran.trajectory_sha256,
    )
    body = build_body(
        run_id=started.run_id,
        config=config,
        bound=Bound(inputs.bundle, started.config_body, started.config_sha, trajectory),
        window=WindowRead(
            sessions=[table.sessions[s].isoformat() for s in window.sessions],
            rows=facts,
            indexes=window.indexes,
        ),
        outcome=Outcome(
            cells=cells,
            probe=grid.probe,
            by_form=by_form,
            aborted=grid.aborted,
            attempts=msgspec.convert(ctx.ledger, list[model.Attempt]),
            trades=lambda arm, clock: trader(grid.cells[(arm, clock)]),
            fault_injection=(
                None
                if config.fault_plan is None
                else fault_report(
                    config.fault_plan,
                    list(grid.cells),
                    [table.sessions[s].isoformat() for s in window.sessions],
                    [e for outcome in grid.cells.values() for e in outcome.fault_events],
                )
            ),
        ),
        # what the drivers report, typed: a field the receipt does not declare is refused
        capabilities=msgspec.convert(ran.capabilities, model.Capabilities),
        network=msgspec.convert(ran.network, model.Network),
        prices=inputs.prices,
        index=inputs.index,
    )
    receipt = write_receipt(config.receipt_path, body)
    return RunResult(
        receipt,
        Path(config.trajectory_path),
        Path(config.receipt_path),
        grid.cells,
        trader,
        window.main_by_key,
    )


def cell_summary(
    outcome: CellOutcome, score: CellScore, measured: dict[str, Any] | None = None
) -> model.Cell:
    """A cell's entry in the receipt: its outcome as counted and its trades as scored
    (and ``measured``: after the config's costs, against its market index)."""
    trades = score.trades
    cell = {
        "arm": outcome.arm,
        "clock": outcome.clock,
        "reachable": REACHABLE[outcome.clock],
        "status": outcome.status,
        "agent_fault": None if outcome.fault is None else outcome.fault.to_json(),
        "entered_before_acceptance": score.entered_early,
        "knowable_before_acceptance": score.knowable_early,
        "sessions": outcome.sessions,
        "decisions_with_picks": len(outcome.picks),
        "rejected_picks": outcome.rejected,
        "agent_errors": outcome.agent_errors,
        "tool_calls": outcome.tool_calls,
        "rows_served": outcome.rows_served,
        "pit_fallbacks_served": outcome.fallbacks_served,
        "unreached_rows": outcome.unreached_rows,
        "trades": len(trades),
        "priced_trades": sum(1 for t in trades if t.status == "priced"),
        "unpriced": {
            s: sum(1 for t in trades if t.status == s)
            for s in ("no_prices", "no_ticker", "no_price")
            if any(t.status == s for t in trades)
        },
        "total_return": total_return(trades),
        "trades_sha256": trades_digest(trades),
    }
    cell.update(measured or {})
    if score.ignored_orders is not None:  # an agent speaking sharpebench's dialect
        cell["ignored_orders"] = score.ignored_orders
    if score.usage is not None:
        cell["usage"] = score.usage
    return msgspec.convert(cell, model.Cell)  # typed: what the types refuse, raises here
