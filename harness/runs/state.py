"""What the rooms of a run share while it runs: the context every cell of one run writes
through (its trajectory, its drivers, the egress and model traffic so far), each cell's
outcome as it is counted, the grid of outcomes, and the abort that ends a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from harness import outcomes
from harness.isolation.drivers import Drivers, HasAttempts
from harness.isolation.egress import Redactor
from harness.isolation.guard import EgressAttempt
from harness.isolation.sandbox.wire import WireAttempt
from harness.market.calendar import SessionTable
from harness.progress import OnProgress
from harness.receipt import model
from harness.rundata.config import RunConfig
from harness.rundata.faultplan import cell_coordinates
from harness.rundata.trajectory import TrajectoryWriter
from harness.runs.faults import CellFaults
from harness.runs.observe import PIT, Dialect


class Aborted(Exception):
    """The run ends here (the abort network policy): its cells not yet run are aborted."""


@dataclass
class CellOutcome:
    """One cell as the cell loop counts it (its record carries it as JSON)."""

    arm: str
    clock: str
    status: str = outcomes.COMPLETE
    sessions: int = 0
    picks: list[tuple[int, list[str]]] = field(default_factory=list)
    rejected: int = 0
    agent_errors: int = 0
    tool_calls: int = 0
    rows_served: int = 0
    fallbacks_served: int = 0
    unreached_rows: int = 0
    fault: outcomes.Fault | None = None
    ignored_orders: int = 0  # a sharpebench agent's orders that open no position
    # the window position of the cell's last toolbox (the probe is served with it)
    last_session: int | None = None
    # what a fault plan did in the cell (its ``fault_event`` events, as written)
    fault_events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunContext:
    """What every cell of one run shares."""

    config: RunConfig
    writer: TrajectoryWriter
    drivers: Drivers
    table: SessionTable
    window: range
    positions: dict[str, int]  # the current arm's row keys -> release position
    egress: list[EgressAttempt] = field(default_factory=list)
    wire: list[dict[str, Any]] = field(default_factory=list)  # what the cells' wires saw
    cell: str = ""  # the cell (or "probe") whose agent runs now
    main_keys: list[str] = field(default_factory=list)  # by release position
    redactor: Redactor | None = None  # the values passed to the agent (pass_env)
    dialect: Dialect = PIT  # how the agent is shown each step (``observe.dialect``)

    ledger: list[dict[str, Any]] = field(default_factory=list)
    model_exchanges: dict[str, int] = field(default_factory=dict)  # by endpoint, as written
    saved: SavedAttempts | None = None  # a checkpoint's failed attempts (``retries``)
    # sessions walked so far, for a bar on a terminal (never part of what the run writes)
    progress: OnProgress | None = None
    sessions_walked: int = 0

    def cell_faults(self, arm: str, clock: str) -> CellFaults | None:
        """A fresh attempt of a cell under the run's fault plan (None without one)."""
        plan = self.config.fault_plan
        if plan is None:
            return None
        sessions = [self.table.sessions[s].isoformat() for s in self.window]
        cell = cell_coordinates(arm, clock, sessions)
        return CellFaults.open(plan, self.dialect, cell, len(self.window))

    def session_walked(self) -> None:
        """One more session walked: the bar's total is every cell's window (a retried
        cell walks its sessions again, so the total grows with it)."""
        if self.progress is None:
            return
        self.sessions_walked += 1
        cells = len(self.config.arms) * len(self.config.clocks)
        self.progress(self.sessions_walked, max(cells * len(self.window), self.sessions_walked))

    def redacted(self, value: Any) -> Any:
        """``value`` with every passed secret out of its strings (and their encodings):
        what the agent sends is recorded, its credentials are not."""
        if self.redactor is None:
            return value
        if isinstance(value, str):
            return self.redactor.text(value)
        if isinstance(value, dict):
            return {self.redacted(k): self.redacted(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redacted(v) for v in value]
        return value

    def record_attempts(self, agent: HasAttempts) -> None:
        """The agent's egress attempts, and its model traffic since the last call: each
        exchange with a declared endpoint goes into the trajectory whole, and each request
        the proxy refused is an egress attempt like any other."""
        exchanges, refused = self.drivers.model_traffic()
        for exchange in exchanges:
            self.writer.write("model_exchange", **exchange)
            label = exchange["endpoint"]
            self.model_exchanges[label] = self.model_exchanges.get(label, 0) + 1
        on_wire = []
        for attempt in [*agent.take_attempts(), *refused]:
            if isinstance(attempt, WireAttempt):
                seen = {"cell": self.cell, **attempt.to_json()}
                self.writer.write("wire_attempt", **seen)
                self.wire.append(seen)
                on_wire.append(attempt)
            else:
                self.writer.write("network_attempt", **attempt.to_json())
                self.egress.append(attempt)
        if self.config.network_policy == "abort":
            if refused:
                raise Aborted(f"network egress through the model proxy to {refused[0].target}")
            if on_wire:
                first = on_wire[0]
                raise Aborted(f"network egress on the wire: {first.protocol} {first.target()}")


@dataclass
class Grid:
    cells: dict[tuple[str, str], CellOutcome]
    probe: model.Probe
    aborted: str | None = None


class SavedAttempts(Protocol):
    """Failed attempts kept outside the run as they happen (``harness.runs.checkpoint``),
    so that a run resumed in another process goes on counting them."""

    def replay(self, ctx: RunContext, label: str) -> tuple[int, int]:
        """Write ``label``'s failed attempts saved by an earlier process into this run as
        ``retrying`` wrote them; return how many, and in how many the agent's process
        exited."""
        ...

    def failed(
        self, label: str, entry: dict[str, Any], kept: list[dict[str, Any]], exited: bool
    ) -> None:
        """One more failed attempt: its ledger entry and the events that outlive it,
        saved before the next attempt starts."""
        ...
