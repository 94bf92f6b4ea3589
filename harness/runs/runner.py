"""Arms x clocks: walk the sessions of the window, one agent call per session per
cell, a fresh agent per cell, everything into the trajectory; then score and write
the receipt.

The entry points: ``run`` (the whole grid and the probe, resumed from a checkpoint when
given one), ``run_cell`` (one cell on its own, a worker's job) and
``assemble`` (the run whose cells were run one by one). The rooms they walk through: what
a run reads (``inputs``), the cell loop (``cells``), what the agent is shown at each step
(``observe``), the probe (``probe``), retries (``retries``), cell records (``records``),
the checkpoint (``checkpoint``) and the scoring and receipt (``finish``)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from harness import canonical, outcomes
from harness.agents.base import AgentSpec
from harness.isolation.drivers import Drivers, open_drivers
from harness.isolation.egress import Redactor, Replay
from harness.isolation.sandbox.outside import SandboxSettings
from harness.isolation.templates import Templates
from harness.market.prices import Prices, price_reference
from harness.outcomes import NOT_APPLICABLE
from harness.progress import OnProgress
from harness.receipt import model
from harness.release.bundle import Bundle
from harness.rundata.config import ConfigError, RunConfig
from harness.rundata.trajectory import TrajectoryWriter
from harness.runs import observe
from harness.runs.cells import cell_with_retries
from harness.runs.checkpoint import Checkpoint
from harness.runs.finish import Ran, RunResult, finish
from harness.runs.inputs import (
    Inputs,
    Window,
    identity,
    out_of_reach,
    resolve_inputs,
    start,
)
from harness.runs.probe import probe_with_retries
from harness.runs.records import (
    CellRecord,
    check_records,
    outcome_json,
    recorded_cell,
    records_by_cell,
    weakest,
)
from harness.runs.state import Aborted, CellOutcome, Grid, RunContext
from harness.tools.toolbox import ArmRows, Toolbox


def run(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    bundle: Bundle | None = None,
    prices: Prices | None = None,
    *,
    sandbox: SandboxSettings | None = None,
    model_replay: list[dict[str, Any]] | None = None,
    hide: Sequence[str | os.PathLike[str]] = (),
    progress: OnProgress | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run ``agent`` over the config's arms x clocks and write trajectory and receipt.

    ``agent`` is an AgentSpec, a plain ``fn(prompt, tools)`` or a name. A ``bundle`` or
    ``prices`` passed here must be the ones the config names, if it names any: a run
    has one source for each, and what it used is what its config binds.

    ``hide``: more files the agent is never shown (re-execution: the recorded run).
    ``model_replay`` (re-execution) answers the agent's model calls from a run's recorded
    ``model_exchange`` events instead of its endpoints (``harness.isolation.egress.Replay``).
    ``progress`` is told each session walked (``harness.progress``); nothing it does
    reaches the trajectory or the receipt.
    ``checkpoint``: a file the run's progress is saved in as it is made, and resumed from
    when it exists (``harness.runs.checkpoint``); a file made by another invocation is
    refused (``CheckpointRefused``) before anything runs.
    """
    inputs = resolve_inputs(agent, config, bundle, prices)
    saved = None
    if checkpoint is not None:
        if model_replay is not None:  # a replay answers in order, from the first cell
            raise ConfigError("a checkpoint cannot resume a run whose model calls are replayed")
        cells = cell_order(config)
        saved = Checkpoint.open(checkpoint, inputs, cells, sandbox or SandboxSettings())
    return execute(
        inputs,
        sandbox=sandbox,
        model_replay=model_replay,
        hide=hide,
        progress=progress,
        checkpoint=saved,
    )


def cell_order(config: RunConfig) -> list[tuple[str, str]]:
    """The cells of a run in the order the runner walks them (and writes them)."""
    return [(arm, clock) for arm in config.arms for clock in config.clocks]


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
    templates: Templates | None = None,
) -> CellRecord:
    """Run one cell of ``config`` on its own and return its record; a job
    machine spreads a run's cells over workers this way and :func:`assemble` joins them.
    Nothing is written to the config's trajectory or receipt. With ``templates`` the
    cell forks from a template kept there, if one was left by an earlier run
    (``harness.isolation.templates``)."""
    if (arm, clock) not in cell_order(config):
        raise ConfigError(f"cell {arm}/{clock}: not a cell of this config")
    if prices is None and config.prices is not None:  # bound, never priced here
        stated = config.prices
        prices = price_reference(stated.path, source=stated.source, pulled_at=stated.pulled_at)
    inputs = resolve_inputs(agent, config, bundle, prices)
    with tempfile.TemporaryDirectory(prefix="pit-cell-") as folder:
        writer = TrajectoryWriter(Path(folder) / "cell.jsonl")
        hidden, shut = out_of_reach(inputs, writer, [*hide, folder])
        try:
            with open_drivers(
                inputs.spec,
                config,
                hidden=hidden,
                settings=sandbox or SandboxSettings(),
                shut=shut,
                templates=templates,
            ) as drivers:
                window = Window.build(inputs)
                drivers.ready()
                config_sha = identity(inputs, drivers).config_sha
                ctx = context(inputs, writer, drivers, window)
                rows = arm_rows(ctx, inputs.bundle, window, arm)
                aborted = None
                cells: dict[tuple[str, str], CellOutcome] = {}
                served: dict[int, None] = {}
                try:
                    outcome, _ = cell_with_retries(
                        ctx, cells, arm, clock, window.indexes[clock], rows, served
                    )
                except Aborted as exc:
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
        outcome=outcome_json(outcome),
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
    templates: Templates | None = None,
) -> RunResult:
    """The run whose cells were run one by one (:func:`run_cell`): its trajectory in the
    runner's cell order, the probe run here (with the last shifted cell's toolbox and the
    rows the shifted cells served), and the receipt. For the same agent and config the
    trajectory and the receipt's body are the ones :func:`run` writes. A capability is
    claimed only where every cell's sandbox and this one had it. ``templates`` as for
    :func:`run_cell`."""
    inputs = resolve_inputs(agent, config, bundle, prices)
    by_cell = records_by_cell(records, cell_order(config))
    return execute(inputs, sandbox=sandbox, hide=hide, recorded=by_cell, templates=templates)


def context(
    inputs: Inputs, writer: TrajectoryWriter, drivers: Drivers, window: Window
) -> RunContext:
    config = inputs.config
    ctx = RunContext(config, writer, drivers, window.table, window.sessions, window.positions)
    ctx.main_keys = [f["row_key"] for f in window.facts]
    external = inputs.spec.external
    # what the agent is shown, and how its answers are read: the observation seam's
    ctx.dialect = observe.dialect(None if external is None else external.dialect)
    passed = tuple(os.environ.get(name, "") for name in config.pass_env)
    ctx.redactor = Redactor(passed) if any(passed) else None
    return ctx


def execute(
    inputs: Inputs,
    *,
    sandbox: SandboxSettings | None,
    hide: Sequence[str | os.PathLike[str]],
    model_replay: list[dict[str, Any]] | None = None,
    recorded: dict[tuple[str, str], CellRecord] | None = None,
    progress: OnProgress | None = None,
    checkpoint: Checkpoint | None = None,
    templates: Templates | None = None,
) -> RunResult:
    """The run: its trajectory written from the first event to the last (each cell run
    here, or written from its ``recorded`` record), then scored and its receipt written.
    With a ``checkpoint`` the cells it finished are written from their records and
    every cell and failed attempt run here is saved in it as it ends."""
    config = inputs.config
    if checkpoint is not None:
        recorded = checkpoint.finished()
        hide = [*hide, checkpoint.path]
        checkpoint.path.parent.mkdir(parents=True, exist_ok=True)  # hidden as a folder below
    writer = TrajectoryWriter(config.trajectory_path)
    hidden, shut = out_of_reach(inputs, writer, hide)
    if checkpoint is not None:  # and its folder: the saves' temporary siblings are there
        hidden.append(os.path.abspath(checkpoint.path.parent))
    settings = sandbox or SandboxSettings()
    try:
        # an isolated run's sandbox starts here and comes up while the indexes are built
        replay = None if model_replay is None else Replay(model_replay)
        with open_drivers(
            inputs.spec,
            config,
            hidden=hidden,
            settings=settings,
            replay=replay,
            shut=shut,
            templates=templates,
        ) as drivers:
            window = Window.build(inputs)
            drivers.ready()
            started = start(writer, inputs, drivers, window)
            ctx = context(inputs, writer, drivers, window)
            ctx.progress = progress
            if checkpoint is not None:
                checkpoint.begin(started.config_sha)
                ctx.saved = checkpoint
            if recorded is not None:
                check_records(recorded, started.config_sha)
            grid = run_grid(ctx, inputs.bundle, window, recorded, checkpoint)
            capabilities = drivers.capabilities()
            if recorded is not None:
                capabilities = weakest(capabilities, [r.capabilities for r in recorded.values()])
            # what the sandbox's probe found, bound into the trajectory: the receipt's
            # capabilities must be these (measured at the run, not checkable after it)
            writer.write("capabilities", **capabilities)
            network = drivers.network_block(ctx.egress, wire_listed(ctx.wire))
            writer.write(
                "run_end", aborted=grid.aborted, egress_attempts=network["egress_attempts"]
            )
            model = network["model_egress"]
            model["exchanges"] = {e: ctx.model_exchanges.get(e, 0) for e in model["endpoints"]}
    except BaseException:
        writer.discard()  # no half trajectory is left behind to be mistaken for a run
        raise
    trajectory_sha = writer.close()
    return finish(
        Ran(
            inputs=inputs,
            window=window,
            started=started,
            grid=grid,
            ctx=ctx,
            trajectory_sha256=trajectory_sha,
            capabilities=capabilities,
            network=network,
        )
    )


def wire_listed(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the wire saw, as the receipt lists it: each attempt's cell and destination
    (its time stays in the trajectory, so that the body of a run stays one run's)."""
    return [{k: v for k, v in event.items() if k != "at"} for event in seen]


def run_grid(
    ctx: RunContext,
    bundle: Bundle,
    window: Window,
    recorded: dict[tuple[str, str], CellRecord] | None = None,
    checkpoint: Checkpoint | None = None,
) -> Grid:
    """Every cell, arm by arm (one arm's rows in memory at a time), and the probe. With
    ``recorded``, each cell it holds is written from its record instead of run (every
    cell, for ``assemble``; those a checkpoint saved, for a resumed run); with a
    ``checkpoint``, each cell run is saved in it as it ends."""
    config = ctx.config
    grid = Grid(
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
            rows = arm_rows(ctx, bundle, window, arm)
            served: dict[int, None] = {}
            last: tuple[CellOutcome, Toolbox] | None = None
            for clock in config.clocks:
                index = window.indexes[clock]
                record = None if recorded is None else recorded.get((arm, clock))
                if record is not None:
                    outcome, tools = recorded_cell(ctx, grid.cells, record, index, rows, served)
                elif checkpoint is not None:
                    outcome, tools = checkpoint.run_cell(
                        ctx, grid.cells, arm, clock, index, rows, served
                    )
                else:
                    outcome, tools = cell_with_retries(
                        ctx, grid.cells, arm, clock, index, rows, served
                    )
                if tools is not None:
                    last = (outcome, tools)
            if arm == "shifted" and config.probe and not ctx.dialect.asks_probe:
                grid.probe = msgspec.convert(
                    {"arm": "shifted", "status": NOT_APPLICABLE, "items": []}, model.Probe
                )
            elif arm == "shifted" and config.probe and last is not None:
                grid.probe = probe_with_retries(ctx, last, rows, window.facts, served)
            bundle.release_rows(arm)
    except Aborted as exc:
        grid.aborted = str(exc)
        for outcome in grid.cells.values():
            if outcome.status == "running":
                outcome.status = outcomes.ABORTED
    return grid


def arm_rows(ctx: RunContext, bundle: Bundle, window: Window, arm: str) -> ArmRows:
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
