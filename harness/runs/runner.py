"""Arms x clocks: walk the sessions of the window, one agent call per session per
cell, a fresh agent per cell, everything into the trajectory; then score and write
the receipt."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from harness import canonical, outcomes
from harness.agents.base import AgentSpec, Decision, Task, as_agent
from harness.agents.external import describe
from harness.isolation.drivers import (
    CellAgent,
    Drivers,
    HasAttempts,
    capability_line,
    open_drivers,
)
from harness.isolation.egress import Redactor, Replay
from harness.isolation.guard import EgressAttempt, NetworkAbort
from harness.isolation.sandbox.outside import SandboxSettings
from harness.isolation.sandbox.wire import WireAttempt
from harness.market.calendar import SessionTable, sessions_for
from harness.market.clocks import REACHABLE, iso_utc, knowable_before_acceptance
from harness.market.prices import PriceError, Prices, load_prices, price_reference
from harness.market.scoring import (
    Trade,
    add_by_form,
    entered_before_acceptance,
    make_trades,
    total_return,
    trades_digest,
)
from harness.outcomes import NOT_APPLICABLE
from harness.protocol import sharpebench as sharpebench_wire
from harness.receipt import model
from harness.receipt.build import Bound, Outcome, WindowRead, build_body, write_receipt
from harness.release.bundle import Bundle
from harness.rundata.config import ConfigError, PriceSpec, RunConfig
from harness.rundata.probe_scoring import (
    MAX_ANSWER,
    answer_key,
    pick_items,
    probe_prompt,
    score_answer,
    verdict,
)
from harness.rundata.trajectory import TrajectoryWriter
from harness.tools.toolbox import ArmRows, ClockIndex, Toolbox, knowable_test
from harness.version import HARNESS_NAME, HARNESS_VERSION

# A window of at most this many rows is parsed once up front, every arm (about 1 KB
# a row); beyond it each served row is parsed from its stored line, which keeps a
# whole-release run under 1 GiB at the price of parsing a served row again.
PARSE_UP_FRONT = 100_000
_FACTS = ("row_key", "form", "ticker", "issuer", "partition_date", "published_at", "acceptance_at")


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    return {k: sys.intern(v) if isinstance(v, str) else v for k in _FACTS for v in (row.get(k),)}


def trade_prompt(
    *, arm: str, clock: str, session_date: str, known_at: str, new: int, hold: int
) -> str:
    return (
        f"Session {session_date}, opening bell {known_at} ({arm} arm, {clock} clock). "
        f"{new} filings became knowable since the previous bell. Read the window with "
        "pit_list, pit_search, pit_read and pit_coverage, then reply with the row_key "
        f"values to buy at this bell's opening auction (held {hold} sessions)."
    )


@dataclass
class CellOutcome:
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


def _same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _check_same_prices(prices: Prices, stated: PriceSpec) -> None:
    """Prices passed to ``run`` and prices named in the config must be one and the same."""
    try:  # the same file is the same bytes: its digest tells, no need to read its bars
        named = price_reference(stated.path, source=stated.source, pulled_at=stated.pulled_at)
    except PriceError as exc:
        raise ConfigError(f"prices: the config's price file cannot be read ({exc})") from None
    if named.reference() != prices.reference():
        passed, config = prices.reference(), named.reference()
        differ = [k for k in passed if passed[k] != config[k]]
        raise ConfigError(
            "prices: the Prices passed and config.prices disagree on "
            + ", ".join(f"{k} ({passed[k]!r} passed, {config[k]!r} in the config)" for k in differ)
        )


class _Aborted(Exception):
    pass


def _check_picks(
    decision: Decision, knowable: Callable[[str], bool]
) -> tuple[list[str], list[dict[str, str]]]:
    accepted: list[str] = []
    rejected: list[dict[str, str]] = []
    seen: set[str] = set()
    for pick in decision.picks:
        if not isinstance(pick, str):
            rejected.append({"row_key": repr(pick)[:80], "reason": "not_a_row_key"})
        elif pick in seen:
            rejected.append({"row_key": pick, "reason": "duplicate"})
        elif not knowable(pick):
            rejected.append({"row_key": pick, "reason": "not_knowable_at_bell"})
        else:
            seen.add(pick)
            accepted.append(pick)
    return accepted, rejected


@dataclass
class _Context:
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
    dialect: str | None = None  # an external agent's dialect (None: a Python agent)

    ledger: list[dict[str, Any]] = field(default_factory=list)
    model_exchanges: dict[str, int] = field(default_factory=dict)  # by endpoint, as written

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
                raise _Aborted(f"network egress through the model proxy to {refused[0].target}")
            if on_wire:
                first = on_wire[0]
                raise _Aborted(f"network egress on the wire: {first.protocol} {first.target()}")


# What a failed attempt did that outlives it: its egress attempts count against the run
# and its model exchanges are recorded, whatever became of the attempt.
KEPT_FROM_FAILED_ATTEMPTS = ("network_attempt", "wire_attempt", "model_exchange")


@dataclass(frozen=True)
class _Tries:
    ok: bool
    value: Any = None
    agent_exited: bool = False  # every failed attempt: the agent's own process exited


def _retrying(
    ctx: _Context, label: str, attempt_fn: Callable[[], Any], on_retry: Callable[[], None]
) -> _Tries:
    """Run ``attempt_fn`` until it does not fail on our side, at most RUNTIME_ATTEMPTS
    times. A failed attempt's decisions and tool calls leave the trajectory; in their
    place go an ``attempt_failed`` event (the ledger entry, which the hashed body holds
    too) and, again, every egress attempt and model exchange it made: those count and
    invalidate as if the attempt had succeeded, so a retry cannot launder them."""
    exits = 0
    ctx.cell = label
    for attempt in range(1, outcomes.RUNTIME_ATTEMPTS + 1):
        mark = ctx.writer.checkpoint()
        try:
            return _Tries(True, attempt_fn())
        except outcomes.RuntimeFailure as exc:
            exits += isinstance(exc, outcomes.AgentProcessExited)
            # model traffic the proxy still holds belongs to this attempt
            ctx.record_attempts(ctx.drivers.orphan_attempts())
            kept = ctx.writer.events_since(mark, KEPT_FROM_FAILED_ATTEMPTS)
            ctx.writer.rollback(mark)
            on_retry()
            entry = {
                "cell": label,
                "attempt": attempt,
                "failure": str(exc)[:500],
                "egress_attempts": [
                    {k: v for k, v in e.items() if k not in ("event", "seq")}
                    for e in kept
                    if e["event"] in ("network_attempt", "wire_attempt")
                ],
                "model_exchanges": sum(e["event"] == "model_exchange" for e in kept),
            }
            ctx.ledger.append(entry)
            ctx.writer.write("attempt_failed", **entry)
            for event in kept:
                fields = {k: v for k, v in event.items() if k not in ("event", "seq")}
                ctx.writer.write(str(event["event"]), **fields)
    return _Tries(False, agent_exited=exits == outcomes.RUNTIME_ATTEMPTS)


def run(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    bundle: Bundle | None = None,
    prices: Prices | None = None,
    *,
    sandbox: SandboxSettings | None = None,
    model_replay: list[dict[str, Any]] | None = None,
    hide: Sequence[str | os.PathLike[str]] = (),
) -> RunResult:
    """Run ``agent`` over the config's arms x clocks and write trajectory and receipt.

    ``agent`` is an AgentSpec, a plain ``fn(prompt, tools)`` or a name. A ``bundle`` or
    ``prices`` passed here must be the ones the config names, if it names any: a run
    has one source for each, and what it used is what its config binds.

    ``hide``: more files the agent is never shown (re-execution: the recorded run).
    ``model_replay`` (re-execution) answers the agent's model calls from a run's recorded
    ``model_exchange`` events instead of its endpoints (``harness.isolation.egress.Replay``).
    """
    inputs = _resolve_inputs(agent, config, bundle, prices)
    return _execute(inputs, config, sandbox, model_replay, hide, recorded=None)


def cell_order(config: RunConfig) -> list[tuple[str, str]]:
    """The cells of a run in the order the runner walks them (and writes them)."""
    return [(arm, clock) for arm in config.arms for clock in config.clocks]


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


def run_cell(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    arm: str,
    clock: str,
    bundle: Bundle | None = None,
    prices: Prices | None = None,
    *,
    sandbox: SandboxSettings | None = None,
    hide: Sequence[str | os.PathLike[str]] = (),
) -> CellRecord:
    """Run one cell of ``config`` in a sandbox of its own and return its record; a job
    machine spreads a run's cells over workers this way and :func:`assemble` joins them.
    Nothing is written to the config's trajectory or receipt."""
    import tempfile

    if (arm, clock) not in cell_order(config):
        raise ConfigError(f"cell {arm}/{clock}: not a cell of this config")
    if prices is None and config.prices is not None:  # bound, never priced here
        stated = config.prices
        prices = price_reference(stated.path, source=stated.source, pulled_at=stated.pulled_at)
    inputs = _resolve_inputs(agent, config, bundle, prices)
    with tempfile.TemporaryDirectory(prefix="pit-cell-") as folder:
        writer = TrajectoryWriter(Path(folder) / "cell.jsonl")
        hidden, shut = _out_of_reach(inputs, config, writer, [*hide, folder])
        try:
            with open_drivers(
                inputs.spec, config, hidden=hidden, settings=sandbox or SandboxSettings(), shut=shut
            ) as drivers:
                window = _Window.build(inputs, config)
                drivers.ready()
                config_sha = _identity(inputs, config, drivers).config_sha
                ctx = _context(config, writer, drivers, window, inputs)
                rows = _arm_rows(ctx, inputs.bundle, window, arm)
                aborted = None
                cells: dict[tuple[str, str], CellOutcome] = {}
                served: dict[int, None] = {}
                try:
                    outcome, _ = _cell_with_retries(
                        ctx, cells, arm, clock, window.indexes[clock], rows, served
                    )
                except _Aborted as exc:
                    aborted, outcome = str(exc), cells[(arm, clock)]
                capabilities = drivers.capabilities()
        finally:
            writer.close()
        events = [json.loads(line) for line in writer.path.read_text().splitlines()]
    return CellRecord(
        arm=arm,
        clock=clock,
        config_sha256=config_sha,
        events="".join(
            canonical.line({k: v for k, v in e.items() if k != "seq"}) + "\n" for e in events
        ),
        outcome=_outcome_json(outcome),
        ledger=ctx.ledger,
        egress=[a.to_json() for a in ctx.egress],
        wire=ctx.wire,
        model_exchanges=ctx.model_exchanges,
        served=list(served),
        capabilities=capabilities,
        aborted=aborted,
    )


def assemble(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    records: Sequence[CellRecord],
    bundle: Bundle | None = None,
    prices: Prices | None = None,
    *,
    sandbox: SandboxSettings | None = None,
    hide: Sequence[str | os.PathLike[str]] = (),
) -> RunResult:
    """The run whose cells were run one by one (:func:`run_cell`): its trajectory in the
    runner's cell order, the probe run here (with the last shifted cell's toolbox and the
    rows the shifted cells served), and the receipt. For the same agent and config the
    trajectory and the receipt's body are the ones :func:`run` writes. A capability is
    claimed only where every cell's sandbox and this one had it."""
    inputs = _resolve_inputs(agent, config, bundle, prices)
    by_cell: dict[tuple[str, str], CellRecord] = {}
    for record in records:
        key = (record.arm, record.clock)
        if key in by_cell:
            raise AssemblyError(f"cell {record.arm}/{record.clock}: given twice")
        by_cell[key] = record
    missing = [f"{a}/{c}" for a, c in cell_order(config) if (a, c) not in by_cell]
    extra = sorted(f"{a}/{c}" for a, c in by_cell if (a, c) not in cell_order(config))
    if missing or extra:
        raise AssemblyError(
            f"cells missing: {missing or 'none'}; not of this run: {extra or 'none'}"
        )
    return _execute(inputs, config, sandbox, None, hide, recorded=by_cell)


def _outcome_json(outcome: CellOutcome) -> dict[str, Any]:
    fields = dataclasses.asdict(outcome)
    fields["fault"] = None if outcome.fault is None else vars(outcome.fault)
    return fields


def _outcome_of(fields: dict[str, Any]) -> CellOutcome:
    fault = fields["fault"]
    return CellOutcome(
        **{
            **fields,
            "picks": [(s, list(keys)) for s, keys in fields["picks"]],
            "fault": None if fault is None else outcomes.Fault(fault["kind"], fault["message"]),
        }
    )


def _out_of_reach(
    inputs: _Inputs,
    config: RunConfig,
    writer: TrajectoryWriter,
    hide: Sequence[str | os.PathLike[str]],
) -> tuple[list[str], list[str]]:
    """What the agent is never shown (hidden) and what its command may not name (shut):
    the release, the prices, this run's outputs and ``hide``."""
    hidden = [str(inputs.bundle.root), str(writer.partial_path)]
    hidden.append(str(Path(config.receipt_path).parent))
    if inputs.prices is not None and inputs.prices.path:
        hidden.append(inputs.prices.path)
    hidden += [os.fspath(path) for path in hide]
    # absolute: inside, a relative path would name a place under the cell's own /tmp
    hidden = [os.path.abspath(path) for path in hidden]
    # what an agent's command may not name: the release, the prices, this run's outputs
    # (a file beside them, like the agent's own, it may)
    named: list[str | os.PathLike[str]] = [
        inputs.bundle.root,
        writer.partial_path,
        config.trajectory_path,
        config.receipt_path,
    ]
    if inputs.prices is not None and inputs.prices.path:
        named.append(inputs.prices.path)
    named += hide
    return hidden, [os.path.abspath(path) for path in named]


def _context(
    config: RunConfig, writer: TrajectoryWriter, drivers: Drivers, window: _Window, inputs: _Inputs
) -> _Context:
    ctx = _Context(config, writer, drivers, window.table, window.sessions, window.positions)
    ctx.main_keys = [f["row_key"] for f in window.facts]
    if inputs.spec.external is not None:
        ctx.dialect = inputs.spec.external.dialect
    passed = tuple(os.environ.get(name, "") for name in config.pass_env)
    ctx.redactor = Redactor(passed) if any(passed) else None
    return ctx


def _execute(
    inputs: _Inputs,
    config: RunConfig,
    sandbox: SandboxSettings | None,
    model_replay: list[dict[str, Any]] | None,
    hide: Sequence[str | os.PathLike[str]],
    recorded: dict[tuple[str, str], CellRecord] | None,
) -> RunResult:
    writer = TrajectoryWriter(config.trajectory_path)
    hidden, shut = _out_of_reach(inputs, config, writer, hide)
    settings = sandbox or SandboxSettings()
    try:
        # an isolated run's sandbox starts here and comes up while the indexes are built
        replay = None if model_replay is None else Replay(model_replay)
        with open_drivers(
            inputs.spec, config, hidden=hidden, settings=settings, replay=replay, shut=shut
        ) as drivers:
            window = _Window.build(inputs, config)
            drivers.ready()
            started = _start(writer, inputs, config, drivers, window)
            ctx = _context(config, writer, drivers, window, inputs)
            if recorded is not None:
                _check_records(recorded, started.config_sha)
            grid = _run_grid(ctx, inputs.bundle, window, recorded)
            capabilities = drivers.capabilities()
            if recorded is not None:
                capabilities = _weakest(capabilities, [r.capabilities for r in recorded.values()])
            # what the sandbox's probe found, bound into the trajectory: the receipt's
            # capabilities must be these (measured at the run, not checkable after it)
            writer.write("capabilities", **capabilities)
            network = drivers.network_block(ctx.egress, _wire_listed(ctx.wire))
            writer.write(
                "run_end", aborted=grid.aborted, egress_attempts=network["egress_attempts"]
            )
            model = network["model_egress"]
            model["exchanges"] = {e: ctx.model_exchanges.get(e, 0) for e in model["endpoints"]}
    except BaseException:
        writer.discard()  # no half trajectory is left behind to be mistaken for a run
        raise
    trajectory_sha = writer.close()
    return _finish(
        inputs, config, window, started, grid, ctx, trajectory_sha, capabilities, network
    )


def _wire_listed(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the wire saw, as the receipt lists it: each attempt's cell and destination
    (its time stays in the trajectory, so that the body of a run stays one run's)."""
    return [{k: v for k, v in event.items() if k != "at"} for event in seen]


def _check_records(recorded: dict[tuple[str, str], CellRecord], config_sha: str) -> None:
    for (arm, clock), record in recorded.items():
        if record.config_sha256 != config_sha:
            raise AssemblyError(
                f"cell {arm}/{clock}: run under config {record.config_sha256}, "
                f"this run's is {config_sha}"
            )


def _weakest(own: dict[str, Any], others: list[dict[str, Any]]) -> dict[str, Any]:
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


@dataclass
class _Inputs:
    """What a run reads, each from one source: the agent, the bundle, the prices."""

    spec: AgentSpec
    bundle: Bundle
    prices: Prices | None
    forms: tuple[str, ...]
    start: str
    end: str


def _resolve_inputs(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    bundle: Bundle | None,
    prices: Prices | None,
) -> _Inputs:
    spec = as_agent(agent)
    if config.agent not in ("stub", spec.name, spec.ref):
        raise ConfigError(
            f"agent: the config names {config.agent!r}, the agent passed is {spec.name!r}"
        )
    external = spec.external
    if (config.agent_cmd or config.agent_http) and external is None:
        raise ConfigError(
            "agent_cmd/agent_http: the config names an external agent, the agent passed is "
            f"{spec.name!r} (make it with harness.agents.external.configured_agent)"
        )
    if external is not None and external.dialect != config.dialect:
        raise ConfigError(
            f"dialect: the config says {config.dialect!r}, the agent speaks {external.dialect!r}"
        )
    if bundle is None:
        bundle = Bundle.load(
            config.bundle_path, forms=config.forms or None, start=config.start, end=config.end
        )
    elif config.bundle_path and not _same_path(bundle.root, config.bundle_path):
        raise ConfigError(
            f"bundle: the Bundle passed was loaded from {bundle.root}, "
            f"config.bundle_path is {config.bundle_path}"
        )
    forms = tuple(sorted(config.forms)) if config.forms else bundle.forms
    start, end = config.start or bundle.start, config.end or bundle.end
    if (forms, start, end) != (bundle.forms, bundle.start, bundle.end):
        raise ConfigError(
            f"the bundle was loaded for forms {list(bundle.forms)} {bundle.start}..{bundle.end}, "
            f"the config asks for {list(forms)} {start}..{end}"
        )
    if prices is None and config.prices is not None:
        prices = load_prices(
            config.prices.path, source=config.prices.source, pulled_at=config.prices.pulled_at
        )
    elif prices is not None and config.prices is not None:
        _check_same_prices(prices, config.prices)
    return _Inputs(spec, bundle, prices, forms, start, end)


@dataclass
class _Window:
    """The window's sessions and the main arm's facts, indexed once per clock."""

    table: SessionTable
    sessions: range
    facts: list[dict[str, Any]]
    indexes: dict[str, ClockIndex]
    positions: dict[str, int]
    forms_by_position: list[str]
    main_by_key: dict[str, dict[str, Any]]
    keep_parsed: bool

    @classmethod
    def build(cls, inputs: _Inputs, config: RunConfig) -> _Window:
        first, last = date.fromisoformat(inputs.start), date.fromisoformat(inputs.end)
        table = sessions_for(first, last)
        bundle = inputs.bundle
        # A small window keeps every arm parsed; a large one keeps only the facts that
        # clocks, scoring and the probe need of each main row (parsed one line at a time).
        keep_parsed = bundle.row_count <= PARSE_UP_FRONT
        if keep_parsed:
            facts = bundle.rows("main")
        else:
            facts = [_facts(json.loads(text)) for text in bundle.texts("main")]
        return cls(
            table=table,
            sessions=table.window(first, last),
            facts=facts,
            indexes={clock: ClockIndex.build(facts, clock) for clock in config.clocks},
            positions={f["row_key"]: i for i, f in enumerate(facts)},
            forms_by_position=[f["form"] for f in facts],
            main_by_key={f["row_key"]: f for f in facts},
            keep_parsed=keep_parsed,
        )


@dataclass
class _Started:
    config_body: dict[str, Any]
    config_sha: str
    run_id: str


def _identity(inputs: _Inputs, config: RunConfig, drivers: Drivers) -> _Started:
    """The run's identity: its scoring config as resolved, bound with the release and
    the harness version."""
    config_body = config.scoring_body(
        start=inputs.start,
        end=inputs.end,
        forms=inputs.forms,
        agent_process=drivers.mode,
        agent=inputs.spec.name,
        agent_source_sha256=inputs.spec.source_sha256(),
        prices=None if inputs.prices is None else inputs.prices.reference(),
        external=describe(inputs.spec),
    )
    config_sha = canonical.digest(config_body)
    run_id = canonical.digest(
        {
            "config_sha256": config_sha,
            "bundle_content_digest": inputs.bundle.content_digest,
            "harness": HARNESS_VERSION,
        }
    )[7:23]
    return _Started(config_body, config_sha, run_id)


def _start(
    writer: TrajectoryWriter,
    inputs: _Inputs,
    config: RunConfig,
    drivers: Drivers,
    window: _Window,
) -> _Started:
    """The run's identity, written as the trajectory's first event."""
    started = _identity(inputs, config, drivers)
    bundle = inputs.bundle
    writer.write(
        "run_start",
        run_id=started.run_id,
        harness={"name": HARNESS_NAME, "version": HARNESS_VERSION},
        config=started.config_body,
        config_sha256=started.config_sha,
        bundle={"name": bundle.name, "content_digest": bundle.content_digest},
        sessions=[window.table.sessions[s].isoformat() for s in window.sessions],
        rows_in_window=len(window.facts),
    )
    return started


@dataclass
class _Grid:
    cells: dict[tuple[str, str], CellOutcome]
    probe: model.Probe
    aborted: str | None = None


def _run_grid(
    ctx: _Context,
    bundle: Bundle,
    window: _Window,
    recorded: dict[tuple[str, str], CellRecord] | None = None,
) -> _Grid:
    """Every cell, arm by arm (one arm's rows in memory at a time), and the probe. With
    ``recorded``, each cell is written from its record instead of run."""
    config = ctx.config
    grid = _Grid(
        cells={
            (arm, clock): CellOutcome(arm, clock, status=outcomes.NOT_RUN)
            for arm in config.arms
            for clock in config.clocks
        },
        probe=msgspec.convert(
            {"arm": "shifted", "status": outcomes.NOT_RUN, "items": []}, model.Probe
        ),
    )
    try:
        for arm in config.arms:
            rows = _arm_rows(ctx, bundle, window, arm)
            served: dict[int, None] = {}
            last: tuple[CellOutcome, Toolbox] | None = None
            for clock in config.clocks:
                index = window.indexes[clock]
                if recorded is None:
                    outcome, tools = _cell_with_retries(
                        ctx, grid.cells, arm, clock, index, rows, served
                    )
                else:
                    outcome, tools = _recorded_cell(
                        ctx, grid.cells, recorded[(arm, clock)], index, rows, served
                    )
                if tools is not None:
                    last = (outcome, tools)
            if arm == "shifted" and config.probe and ctx.dialect == "sharpebench":
                # the dialect has no message for the probe's question: said in limits
                grid.probe = msgspec.convert(
                    {"arm": "shifted", "status": NOT_APPLICABLE, "items": []}, model.Probe
                )
            elif arm == "shifted" and config.probe and last is not None:
                grid.probe = _probe_with_retries(ctx, last, rows, window.facts, served)
            bundle.release_rows(arm)
    except _Aborted as exc:
        grid.aborted = str(exc)
        for outcome in grid.cells.values():
            if outcome.status == "running":
                outcome.status = outcomes.ABORTED
    return grid


def _arm_rows(ctx: _Context, bundle: Bundle, window: _Window, arm: str) -> ArmRows:
    """An arm's rows, and its row keys' positions set on ``ctx``: each arm has its own
    row keys; the agent reads and picks by them, and the runner joins them to the main
    arm's by position. Control arms are parsed up front only when small; a whole-release
    run parses each served row from its line instead (see ArmRows)."""
    parsed = bundle.rows(arm) if window.keep_parsed else None
    ctx.positions = (
        window.positions
        if arm == "main"
        else {key: i for i, key in enumerate(bundle.row_keys(arm))}
    )
    return ArmRows(bundle.texts(arm), parsed, window.forms_by_position)


def _recorded_cell(
    ctx: _Context,
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
    outcome = cells[(record.arm, record.clock)] = _outcome_of(record.outcome)
    ctx.ledger += record.ledger
    ctx.egress += [
        EgressAttempt(e["call"], e["target"], e["site"], tuple(e["stack"])) for e in record.egress
    ]
    ctx.wire += record.wire
    for endpoint, count in record.model_exchanges.items():
        ctx.model_exchanges[endpoint] = ctx.model_exchanges.get(endpoint, 0) + count
    if record.aborted is not None:
        raise _Aborted(record.aborted)
    for position in record.served:
        served.setdefault(position)
    if outcome.last_session is None:
        return outcome, None
    return outcome, _toolbox(ctx, outcome, index, rows, outcome.last_session, {})


def _finish(
    inputs: _Inputs,
    config: RunConfig,
    window: _Window,
    started: _Started,
    grid: _Grid,
    ctx: _Context,
    trajectory_sha: str,
    capabilities: dict[str, Any],
    network: dict[str, Any],
) -> RunResult:
    """Score every cell from its picks and write the receipt."""
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
    for (arm, clock), outcome in grid.cells.items():
        outcome.unreached_rows = len(facts) - window.indexes[clock].knowable(last_bell)
        trades = trader(outcome)
        entered_early = entered_before_acceptance(outcome.picks, window.main_by_key, table)
        ignored = outcome.ignored_orders if ctx.dialect == "sharpebench" else None
        cells.append(_cell(outcome, trades, entered_early, knowable_early[clock], ignored))
        add_by_form(by_form, f"{arm}/{clock}", trades)

    trajectory = model.Trajectory(
        path=Path(config.trajectory_path).name, events=ctx.writer.events, sha256=trajectory_sha
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
        ),
        # what the drivers report, typed: a field the receipt does not declare is refused
        capabilities=msgspec.convert(capabilities, model.Capabilities),
        network=msgspec.convert(network, model.Network),
        prices=inputs.prices,
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


def _cell_with_retries(
    ctx: _Context,
    cells: dict[tuple[str, str], CellOutcome],
    arm: str,
    clock: str,
    index: ClockIndex,
    rows: ArmRows,
    served: dict[int, None],
) -> tuple[CellOutcome, Toolbox | None]:
    holder: dict[str, Any] = {}

    def attempt() -> Toolbox | None:
        outcome = holder["outcome"] = cells[(arm, clock)] = CellOutcome(
            arm, clock, status="running"
        )
        cell_served: dict[int, None] | None = {} if arm == "shifted" else None
        holder["served"] = cell_served
        return _run_cell(ctx, outcome, index, rows, cell_served)

    tries = _retrying(ctx, f"{arm}/{clock}", attempt, lambda: None)
    if not tries.ok:
        status = outcomes.INCOMPLETE if tries.agent_exited else outcomes.HARNESS_ERROR
        ctx.writer.write(
            "cell_failed", arm=arm, clock=clock, attempts=outcomes.RUNTIME_ATTEMPTS, status=status
        )
        cells[(arm, clock)] = CellOutcome(arm, clock, status=status)
        return cells[(arm, clock)], None
    for position in holder["served"] or ():
        served.setdefault(position)
    return holder["outcome"], tries.value


def _open_agent(ctx: _Context, outcome: CellOutcome) -> CellAgent | None:
    """A fresh agent for a cell; None (and the cell ends as agent_error) if it failed."""
    try:
        agent = ctx.drivers.open()
    except NetworkAbort as exc:
        ctx.record_attempts(ctx.drivers.orphan_attempts())
        raise _Aborted(f"network egress at {exc.attempt.site}") from None
    except outcomes.AgentFault as fault:
        ctx.record_attempts(ctx.drivers.orphan_attempts())
        _fatal(ctx, outcome, fault, session=None)
        return None
    ctx.record_attempts(agent)
    return agent


def _fatal(
    ctx: _Context, outcome: CellOutcome, fault: outcomes.AgentFault, session: str | None
) -> None:
    outcome.status = outcomes.AGENT_ERROR
    outcome.fault = fault.fault
    ctx.writer.write(
        "agent_error",
        arm=outcome.arm,
        clock=outcome.clock,
        session=session,
        fault=fault.fault.to_json(),
    )


def _run_cell(
    ctx: _Context,
    outcome: CellOutcome,
    index: ClockIndex,
    rows: ArmRows,
    served: dict[int, None] | None,
) -> Toolbox | None:
    arm, clock = outcome.arm, outcome.clock
    writer, table, window = ctx.writer, ctx.table, ctx.window
    writer.write(
        "cell_start", arm=arm, clock=clock, reachable=REACHABLE[clock], agent=ctx.drivers.name
    )
    tools: Toolbox | None = None
    agent = _open_agent(ctx, outcome)
    if agent is None:
        writer.write("cell_end", arm=arm, clock=clock)
        return None
    held: list[tuple[int, list[str]]] = []  # (session, the arm's row keys picked then)
    try:
        for s in window:
            tools = _toolbox(ctx, outcome, index, rows, s, served)
            outcome.last_session = s
            task = Task(
                "trade",
                trade_prompt(
                    arm=arm,
                    clock=clock,
                    session_date=tools.session_date,
                    known_at=tools.known_at,
                    new=tools.newly_knowable(),
                    hold=ctx.config.hold_sessions,
                ),
                arm,
                clock,
                tools.session_date,
                tools.known_at,
            )
            if ctx.dialect == "sharpebench":
                held = [(at, keys) for at, keys in held if s - at < ctx.config.hold_sessions]
                task = _with_observation(task, tools, rows, held)
            session_date = table.sessions[s].isoformat()
            writer.write(
                "session",
                arm=arm,
                clock=clock,
                session=session_date,
                bell=iso_utc(table.opens[s]),
                shown_session_date=tools.session_date,
                newly_knowable=tools.newly_knowable(),
            )
            outcome.sessions += 1
            decision, fault = _decide(ctx, agent, task, tools)
            said: dict[str, Any] = {}
            if fault is None and ctx.dialect == "sharpebench":
                decision, said, fault = _from_orders(decision, task)
                outcome.ignored_orders += said.get("ignored_orders", 0)
            error = None
            if fault is not None:
                if fault.fatal:
                    _fatal(ctx, outcome, fault, session=session_date)
                    break
                error = fault.fault.message
                outcome.agent_errors += 1
            # Checked against the runner's own clock state, never the agent's toolbox.
            accepted, rejected = _check_picks(
                decision, knowable_test(index, ctx.positions, table.opens[s])
            )
            outcome.rejected += len(rejected)
            if accepted:  # scored as the main arm's filings they are
                outcome.picks.append((s, [ctx.main_keys[ctx.positions[k]] for k in accepted]))
                held.append((s, accepted))
            writer.write(
                "decision",
                arm=arm,
                clock=clock,
                session=session_date,
                picks=accepted,
                rejected=rejected,
                text=ctx.redacted(decision.text[:4000]),
                agent_error=error,
                **said,
            )
    finally:
        agent.close()
    # what the agent's process sent between its last decision and its end is the cell's
    ctx.record_attempts(agent)
    if outcome.status == "running":
        outcome.status = outcomes.COMPLETE
    writer.write("cell_end", arm=arm, clock=clock)
    return tools


def _toolbox(
    ctx: _Context,
    outcome: CellOutcome,
    index: ClockIndex,
    rows: ArmRows,
    s: int,
    served: dict[int, None] | None,
) -> Toolbox:
    """The cell's tools at session ``s``: every call counted in ``outcome`` and written
    into the trajectory."""
    arm, clock, table = outcome.arm, outcome.clock, ctx.table
    session_date = table.sessions[s].isoformat()

    def record(
        tool: str,
        args: dict[str, Any],
        result: dict[str, Any],
        row_texts: list[str] | None,
    ) -> None:
        outcome.tool_calls += 1
        served_rows = result.get("rows") or ([result["row"]] if "row" in result else [])
        outcome.rows_served += len(served_rows)
        outcome.fallbacks_served += sum(
            1 for r in served_rows if clock == "pit" and r.get("known_at_source") == "published_at"
        )
        ctx.writer.write_tool_call(
            result,
            row_texts,
            arm=arm,
            clock=clock,
            session=session_date,
            tool=tool,
            args=ctx.redacted(args),
        )

    return Toolbox(
        arm=arm,
        index=index,
        rows=rows,
        positions=ctx.positions,
        bell=table.opens[s],
        previous_bell=table.opens[s - 1] if s > ctx.window.start else None,
        session_date=session_date,
        record=record,
        served=served.setdefault if served is not None else None,
    )


def _with_observation(
    task: Task, tools: Toolbox, rows: ArmRows, held: list[tuple[int, list[str]]]
) -> Task:
    """A sharpebench agent's task: the MarketObservation of this bell. Its symbols are the
    rows that became knowable at this bell and the rows held (symbol = the arm's row key,
    news = the arm's form and title); no prices, so none can unmask a control arm; each
    held row is one unit of notional at no stated price, and cash is constant."""
    keys = [key for _, picked in held for key in picked]
    positions = [*tools.newly_positions(), *(tools.position(k) for k in keys)]
    symbols = []
    for position in positions:
        row = rows.view(position)
        news = f"{row.get('form') or ''}: {row.get('title') or ''}".strip(": ")
        symbols.append({"symbol": row["row_key"], "close_history": [], "news": [news]})
    observation = sharpebench_wire.MarketObservation(
        date=task.session_date,
        cash=1.0,
        symbols=msgspec.convert(symbols, list[sharpebench_wire.SymbolSnapshot]),
        portfolio=[sharpebench_wire.PositionState(k, 1.0, 0.0) for k in keys],
    )
    return dataclasses.replace(task, observation=msgspec.to_builtins(observation), held=tuple(keys))


def _from_orders(
    decision: Decision, task: Task
) -> tuple[Decision, dict[str, Any], outcomes.AgentFault | None]:
    """A sharpebench decision's picks, read by the runner from the orders themselves (what
    the cell reports is read again by the closed type and checked against the observation
    it answers, never trusted), and what the trajectory records of them."""
    assert task.observation is not None
    try:
        scored = msgspec.convert(decision.wire, sharpebench_wire.Scored)
        observed = [s["symbol"] for s in task.observation["symbols"]]
        seen = [o.symbol for o in scored.orders]
        stray = next((sym for sym in seen if sym not in observed), None)
        if stray is not None or len(set(seen)) != len(seen):
            raise ValueError(f"an order for {stray!r}, not observed" if stray else "a symbol twice")
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        fault = outcomes.AgentFault(
            outcomes.PROTOCOL_VIOLATION, f"the decision's orders were refused: {exc}"
        )
        return Decision(), {}, fault
    picks, ignored = sharpebench_wire.picks(scored, set(observed) - set(task.held))
    wire = msgspec.to_builtins(scored)
    said = {"orders": wire["orders"], "ignored_orders": ignored}
    if "cost" in wire:
        said["cost"] = wire["cost"]
    return Decision(picks=tuple(picks), text=decision.text), said, None


def _decide(
    ctx: _Context, agent: CellAgent, task: Task, tools: Toolbox
) -> tuple[Decision, outcomes.AgentFault | None]:
    """The agent's decision, or an empty one and its fault; its egress attempts recorded
    either way. Under the abort policy an attempt ends the run."""
    try:
        decision, fault = agent.decide(task, tools), None
        outcomes.require_json_data(decision.text, "decision text")
        outcomes.require_json_data(
            [p for p in decision.picks if isinstance(p, str)], "decision picks"
        )
    except NetworkAbort as exc:
        ctx.record_attempts(agent)
        raise _Aborted(f"network egress at {exc.attempt.site}") from None
    except outcomes.AgentFault as exc:
        decision, fault = Decision(), exc
    except outcomes.RuntimeFailure:
        # the attempt fails; what it did before (egress, model exchanges) is its own
        ctx.record_attempts(agent)
        raise
    ctx.record_attempts(agent)
    wrong = tools.take_fault()
    if wrong is not None:  # a tool argument of the wrong type: the first fault, and final
        decision, fault = Decision(), wrong
    return decision, fault


def _probe_with_retries(
    ctx: _Context,
    last: tuple[CellOutcome, Toolbox],
    rows: ArmRows,
    facts: list[dict[str, Any]],
    served: dict[int, None],
) -> model.Probe:
    outcome, tools = last
    # the probe's tool calls are counted in the last shifted cell, as they are served
    # with its toolbox; a retried probe puts the counters back first
    counters = dict(vars(outcome))
    tries = _retrying(
        ctx,
        "probe",
        lambda: _run_probe(ctx, tools, rows, facts, served),
        lambda: vars(outcome).update(counters),
    )
    if tries.ok:
        result: model.Probe = tries.value
        return result
    status = outcomes.INCOMPLETE if tries.agent_exited else outcomes.HARNESS_ERROR
    ctx.writer.write("probe_failed", attempts=outcomes.RUNTIME_ATTEMPTS, status=status)
    return msgspec.convert({"arm": "shifted", "status": status, "items": []}, model.Probe)


def _run_probe(
    ctx: _Context,
    tools: Toolbox,
    rows: ArmRows,
    facts: list[dict[str, Any]],
    served: dict[int, None],
) -> model.Probe:
    stride, chosen = pick_items(list(served), ctx.config.probe)
    probe_outcome = CellOutcome("shifted", "probe")
    agent = _open_agent(ctx, probe_outcome)
    if agent is None:
        summary = _probe_summary([], probe_outcome.fault, stride, len(served))
        return msgspec.structs.replace(summary, agent_errors=1, verdict="inconclusive")
    items = []
    fault: outcomes.Fault | None = None
    try:
        for n, position in enumerate(chosen):
            shown = rows.copy(position)
            task = Task(
                "probe",
                probe_prompt(shown),
                "shifted",
                tools.clock,
                tools.session_date,
                tools.known_at,
            )
            decision, failed = _decide(ctx, agent, task, tools)
            error = None if failed is None else failed.fault.message
            if failed is not None and failed.fatal:
                fault = failed.fault
            # scored as recorded: what a verifier re-scores is the answer without secrets
            answer = ctx.redacted(
                (decision.text or " ".join(str(p) for p in decision.picks))[:MAX_ANSWER]
            )
            key = answer_key(facts[position])
            item = {
                "item": n,
                "row_key": shown["row_key"],
                "answer": answer,
                "answer_key": key,
                "score": score_answer(answer, key),
                "agent_error": error,
            }
            ctx.writer.write("probe_item", **item)
            items.append(item)
            if fault is not None:
                break
    finally:
        agent.close()
    ctx.record_attempts(agent)
    return _probe_summary(items, fault, stride, len(served))


def _probe_summary(
    items: list[dict[str, Any]], fault: outcomes.Fault | None, stride: int, served: int
) -> model.Probe:
    summary = {
        "arm": "shifted",
        "status": outcomes.COMPLETE if fault is None else outcomes.AGENT_ERROR,
        "fault": None if fault is None else fault.to_json(),
        "stride": stride,
        "served_rows": served,
        "items": items,
        "total": len(items),
        "recovered": sum(1 for i in items if i["score"]["date_recovered"]),
        "year_only": sum(1 for i in items if i["score"]["year_recovered"]),
        "issuer_recovered": sum(1 for i in items if i["score"]["issuer_recovered"]),
        "agent_errors": sum(1 for i in items if i["agent_error"]),
        "verdict": verdict(items),
    }
    return msgspec.convert(summary, model.Probe)  # typed: what the types refuse, raises here


def _cell(
    outcome: CellOutcome,
    trades: list[Trade],
    entered_early: int,
    knowable_early: int,
    ignored: int | None = None,
) -> model.Cell:
    cell = {
        "arm": outcome.arm,
        "clock": outcome.clock,
        "reachable": REACHABLE[outcome.clock],
        "status": outcome.status,
        "agent_fault": None if outcome.fault is None else outcome.fault.to_json(),
        "entered_before_acceptance": entered_early,
        "knowable_before_acceptance": knowable_early,
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
    if ignored is not None:  # an agent speaking sharpebench's dialect
        cell["ignored_orders"] = ignored
    return msgspec.convert(cell, model.Cell)  # typed: what the types refuse, raises here
