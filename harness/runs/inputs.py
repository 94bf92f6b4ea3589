"""What a run reads and who it is: the agent, the bundle and the prices, each from one
source and checked against the config (``resolve_inputs``); the window's sessions and the
main arm's facts, indexed once per clock (``Window``); the run's identity, written as the
trajectory's first event (``start``); and what the agent may never see (``out_of_reach``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from harness import canonical
from harness.agents.base import AgentSpec, as_agent
from harness.agents.external import describe
from harness.isolation.drivers import Drivers
from harness.market.calendar import SessionTable, sessions_for
from harness.market.index import MarketIndex, load_index
from harness.market.prices import PriceError, Prices, load_prices, price_reference
from harness.release.bundle import Bundle
from harness.rundata.config import ConfigError, PriceSpec, RunConfig
from harness.rundata.trajectory import TrajectoryWriter
from harness.tools.toolbox import ClockIndex
from harness.version import HARNESS_NAME, HARNESS_VERSION

# A window of at most this many rows is parsed once up front, every arm (about 1 KB
# a row); beyond it each served row is parsed from its stored line, which keeps a
# whole-release run under 1 GiB at the price of parsing a served row again.
PARSE_UP_FRONT = 100_000
_FACTS = ("row_key", "form", "ticker", "issuer", "partition_date", "published_at", "acceptance_at")


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    return {k: sys.intern(v) if isinstance(v, str) else v for k in _FACTS for v in (row.get(k),)}


def _same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def check_same_prices(prices: Prices, stated: PriceSpec) -> None:
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


@dataclass(frozen=True)
class Inputs:
    """What a run reads, each from one source: its config, the agent, the bundle, the
    prices (and the forms and window the bundle was loaded for)."""

    config: RunConfig
    spec: AgentSpec
    bundle: Bundle
    prices: Prices | None
    forms: tuple[str, ...]
    start: str
    end: str
    index: MarketIndex | None = None  # the market the cells are measured against


def resolve_inputs(
    agent: AgentSpec | Callable[..., Any] | str,
    config: RunConfig,
    bundle: Bundle | None,
    prices: Prices | None,
) -> Inputs:
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
    if config.fault_plan is not None and external is None:
        raise ConfigError(
            "fault_plan: a fault plan needs an external agent (agent_cmd or agent_http): "
            f"it changes what the agent is shown on the wire, and {spec.name!r} is not one"
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
        check_same_prices(prices, config.prices)
    return Inputs(config, spec, bundle, prices, forms, start, end, _index(config))


def _index(config: RunConfig) -> MarketIndex | None:
    spec = config.benchmark_index
    if spec is None:
        return None
    if config.prices is None:
        raise ConfigError("benchmark_index: measuring against an index needs the run's prices")
    try:
        return load_index(
            spec.path, symbol=spec.symbol, source=spec.source, pulled_at=spec.pulled_at
        )
    except PriceError as exc:
        raise ConfigError(f"benchmark_index: {exc}") from None


@dataclass(frozen=True)
class Window:
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
    def build(cls, inputs: Inputs) -> Window:
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
            indexes={clock: ClockIndex.build(facts, clock) for clock in inputs.config.clocks},
            positions={f["row_key"]: i for i, f in enumerate(facts)},
            forms_by_position=[f["form"] for f in facts],
            main_by_key={f["row_key"]: f for f in facts},
            keep_parsed=keep_parsed,
        )


@dataclass(frozen=True)
class Started:
    """The run's identity: its scoring config as resolved, that config's digest, its id."""

    config_body: dict[str, Any]
    config_sha: str
    run_id: str


def identity(inputs: Inputs, drivers: Drivers | str) -> Started:
    """The run's identity: its scoring config as resolved, bound with the release and
    the harness version. ``drivers``: the run's, or the agent process they will have
    (``harness.isolation.drivers.agent_process``: a checkpoint's contract is made before
    they start)."""
    config_body = inputs.config.scoring_body(
        start=inputs.start,
        end=inputs.end,
        forms=inputs.forms,
        agent_process=drivers if isinstance(drivers, str) else drivers.mode,
        agent=inputs.spec.name,
        agent_source_sha256=inputs.spec.source_sha256(),
        prices=None if inputs.prices is None else inputs.prices.reference(),
        external=describe(inputs.spec),
        index=None if inputs.index is None else inputs.index.reference(),
    )
    config_sha = canonical.digest(config_body)
    run_id = canonical.digest(
        {
            "config_sha256": config_sha,
            "bundle_content_digest": inputs.bundle.content_digest,
            "harness": HARNESS_VERSION,
        }
    )[7:23]
    return Started(config_body, config_sha, run_id)


def start(writer: TrajectoryWriter, inputs: Inputs, drivers: Drivers, window: Window) -> Started:
    """The run's identity, written as the trajectory's first event."""
    started = identity(inputs, drivers)
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


def out_of_reach(
    inputs: Inputs, writer: TrajectoryWriter, hide: Sequence[str | os.PathLike[str]]
) -> tuple[list[str], list[str]]:
    """What the agent is never shown (hidden) and what its command may not name (shut):
    the release, the prices, this run's outputs and ``hide``."""
    config = inputs.config
    hidden = [str(inputs.bundle.root), str(writer.partial_path)]
    hidden.append(str(Path(config.receipt_path).parent))
    if inputs.prices is not None and inputs.prices.path:
        hidden.append(inputs.prices.path)
    if inputs.index is not None:
        hidden.append(inputs.index.series.path)
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
    if inputs.index is not None:
        named.append(inputs.index.series.path)
    named += hide
    return hidden, [os.path.abspath(path) for path in named]
