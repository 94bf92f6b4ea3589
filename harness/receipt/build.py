"""The receipt: a canonical body, its sha256, and a wall-clock stamp outside it.

The file is one canonical line ``{"body": ..., "body_sha256": ..., "emitted_at": ...}``
so that any byte changed inside the body either changes its hash or breaks the canonical
layout. ``emitted_at`` is the only field allowed to differ between two runs of the same
configuration over the same release. The ledger of attempts that failed on our side
(``attempts``) is inside the body: a run that needed a retry says so, and what its
failed attempts did (egress, model exchanges) counts.

``build_body`` builds the typed body (``harness.receipt.model``) from what the run bound,
the window it read and what it produced; each part has its ``*_part`` builder. The
``*_slot`` and ``release_block`` functions give the same parts as plain dicts, the form
the verifier's re-derivation compares a body's dicts with.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from harness import canonical, outcomes
from harness.market.frictions import CostModel, cost_model, return_after_costs
from harness.market.index import MarketIndex, market_figures
from harness.market.scoring import Trade, delta
from harness.receipt import model
from harness.receipt.placebo import placebo
from harness.version import HARNESS_NAME, HARNESS_VERSION, RECEIPT_VERSION

if TYPE_CHECKING:
    from harness.market.calendar import SessionTable
    from harness.market.prices import Prices
    from harness.release.bundle import Bundle
    from harness.rundata.config import RunConfig
    from harness.tools.toolbox import ClockIndex


class ReceiptError(ValueError):
    """A receipt file that is not a receipt."""


IN_PROCESS_NETWORK_LIMIT = (
    "network: the guard patches this process's socket, DNS and TLS entry points; a subprocess "
    "the agent spawns, or a model provider's own weights, are out of its scope"
)
LIMITS = [
    "memory: no guard reaches what a model learned in training; the shifted and redacted arms "
    "measure it as the contamination delta, which can also carry lost information and distraction",
    "probe: scores answer text only; a model that infers the period and keeps it to itself passes",
    "prices: the source and pulled_at statement is the submitter's declaration; the harness "
    "records it and checks nothing about it",
    "release: a run checks every segment it reads against hashes chained to the manifest's "
    "content digest; the rest of the release is checked by `pit-harness verify --bundle`",
    "returns: long only, equal weight per trade, no costs, no slippage, no shorts; absolute "
    "returns belong to the basket and window, only differences between cells are attributable",
]

COSTED_RETURNS_LIMIT = (
    "returns: long only, equal weight per trade, fees as the config's cost model states them "
    "(P4) and no other friction: no slippage, no market impact, no shorts; absolute returns "
    "belong to the basket and window, only differences between cells are attributable"
)
MARKET_LIMIT = (
    "market: beta and alpha are fitted to the mean one-session return of the trades open each "
    "session, not to a compounded portfolio; the index's source is the submitter's declaration"
)

SHARPEBENCH_PROBE_LIMIT = (
    "probe: not_applicable: the agent speaks sharpebench's dialect, which has no message for "
    "the mask probe's question, so whether the shifted arm's mask held is not measured; its "
    "orders other than buys of newly knowable rows are recorded and counted as ignored_orders"
)


def training_cutoff_part(cutoff: str, start: str, end: str) -> model.TrainingCutoffSlot:
    """P2: the declared cutoff checked against the window, or a gap."""
    kind: Literal["declared_then_checked"] = "declared_then_checked"
    if not cutoff:
        return model.TrainingCutoffSlot(kind=kind, status="gap", declared=None)
    day = date.fromisoformat(cutoff)
    check: model.CutoffCheck
    if date.fromisoformat(end) <= day:  # the cutoff day itself is in the training data
        check = "window_ends_before_cutoff"
        meaning = "the window is inside the model's training data: the main arm's score is not evidence of forecasting"
    elif date.fromisoformat(start) > day:
        check = "window_starts_after_cutoff"
        meaning = "the window lies after the declared cutoff"
    else:
        check = "window_crosses_cutoff"
        meaning = (
            "the window crosses the declared cutoff: after it the contamination delta should vanish"
        )
    return model.TrainingCutoffSlot(
        kind=kind, status="declared", declared=cutoff, check=check, meaning=meaning
    )


def model_version_part(model_version: str) -> model.ModelVersionSlot:
    """P1: the model version as the config declares it, or a gap."""
    return model.ModelVersionSlot(
        kind="declared",
        status="declared" if model_version else "gap",
        declared=model_version or None,
    )


def provenance_part(
    bundle: Bundle, span: model.Window, sessions: list[str]
) -> model.ProvenanceSlot:
    """P5: the release and the window the run walked."""
    return model.ProvenanceSlot(
        kind="measured",
        status="measured",
        release=bundle.name,
        content_digest=bundle.content_digest,
        provenance=bundle.manifest.get("provenance"),
        source_kind=(bundle.manifest.get("source") or {}).get("kind"),
        window=span,
        forms=list(bundle.forms),
        sessions=len(sessions),
        first_session=sessions[0] if sessions else None,
        last_session=sessions[-1] if sessions else None,
    )


def disaggregation_part(by_form: dict[str, dict[str, Any]]) -> model.DisaggregationSlot:
    """P6: trades and returns per form, per cell."""
    return model.DisaggregationSlot(
        kind="measured",
        status="measured",
        by_form=msgspec.convert(by_form, dict[str, dict[str, model.FormCell]]),
    )


def release_part(bundle: Bundle, span: model.Window, rows: list[dict[str, Any]]) -> model.Release:
    """The release as the run read it: its name, the window, the forms and their rows."""
    forms = Counter(r["form"] for r in rows)
    return model.Release(
        name=bundle.name,
        window=span,
        forms=list(bundle.forms),
        rows=len(rows),
        rows_by_form=dict(sorted(forms.items())),
    )


def retrieval_part(
    served: Counter[str], *, rows: int, stamped: int, pit: bool
) -> model.RetrievalSlot:
    """P3: what the cells were served (``served`` sums their counters), and how many of
    the window's rows carry a stamp."""
    return model.RetrievalSlot(
        kind="measured",
        status="measured",
        tool_calls=served["tool_calls"],
        rows_served=served["rows_served"],
        rows_in_window=rows,
        acceptance_stamped_rows=stamped,
        pit_fallback_rows=(rows - stamped) if pit else 0,
        pit_fallbacks_served=served["pit_fallbacks_served"],
        rule="a row is served only when its clock's known_at is strictly before the session's opening bell",
    )


_SERVED = ("tool_calls", "rows_served", "pit_fallbacks_served")


def _entry(statement: dict[str, Any] | None) -> str:
    if statement is None or statement.get("basis") == "open":
        return "long at the entry session's opening auction"
    return "long at the entry session's close (close-only price file)"


def costs_part(
    statement: dict[str, Any] | None,
    hold_sessions: int,
    costs: CostModel | None = None,
    index: dict[str, Any] | None = None,
) -> model.CostsSlot:
    """P4: the prices as stated (declared, not verified), the frictions applied (or not
    modelled) and the market index as stated."""
    return model.CostsSlot(
        kind="declared",
        status="declared",
        prices=None if statement is None else msgspec.convert(statement, model.PriceStatement),
        entry=_entry(statement),
        hold_sessions=hold_sessions,
        costs="none modelled"
        if costs is None
        else msgspec.convert(costs.statement(), model.CostStatement),
        slippage="none modelled",
        shorts=False,
        benchmark_index=msgspec.UNSET
        if index is None
        else msgspec.convert(index, model.IndexStatement),
    )


def measured_fields(
    trades: list[Trade],
    *,
    costs: CostModel | None,
    index: MarketIndex | None,
    prices: Prices | None,
    table: SessionTable,
    hold_sessions: int,
) -> dict[str, Any]:
    """A cell's figures beyond its gross return: ``total_return_after_costs`` with a
    cost model, ``market`` with a market index (each absent without one)."""
    fields: dict[str, Any] = {}
    if costs is not None:
        fields["total_return_after_costs"] = return_after_costs(trades, costs)
    if index is not None and prices is not None:
        fields["market"] = market_figures(
            trades, prices=prices, index=index, table=table, hold_sessions=hold_sessions
        )
    return fields


# -- the same parts as plain dicts, as the verifier's re-derivation compares them ---------


def _plain(part: model.Part) -> dict[str, Any]:
    plain: dict[str, Any] = msgspec.to_builtins(part)
    return plain


def training_cutoff_slot(cutoff: str, start: str, end: str) -> dict[str, Any]:
    """P2 without its kind."""
    slot = _plain(training_cutoff_part(cutoff, start, end))
    del slot["kind"]
    return slot


def model_version_slot(model_version: str) -> dict[str, Any]:
    return _plain(model_version_part(model_version))


def provenance_slot(bundle: Bundle, start: str, end: str, sessions: list[str]) -> dict[str, Any]:
    return _plain(provenance_part(bundle, model.Window(start=start, end=end), sessions))


def disaggregation_slot(by_form: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return _plain(disaggregation_part(by_form))


def release_block(
    bundle: Bundle, start: str, end: str, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    return _plain(release_part(bundle, model.Window(start=start, end=end), rows))


def retrieval_slot(
    cells: list[dict[str, Any]], *, rows: int, stamped: int, pit: bool
) -> dict[str, Any]:
    served = Counter({key: sum(c[key] for c in cells) for key in _SERVED})
    return _plain(retrieval_part(served, rows=rows, stamped=stamped, pit=pit))


def costs_slot(
    statement: dict[str, Any] | None,
    hold_sessions: int,
    costs: dict[str, Any] | None = None,
    index: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """P4 around the statements a body holds (taken as they are, not checked) and the
    cost model a config binds."""
    slot = _plain(costs_part(None, hold_sessions, None if costs is None else cost_model(costs)))
    if index is not None:
        slot["benchmark_index"] = index
    return {**slot, "prices": statement, "entry": _entry(statement)}


@dataclass(frozen=True)
class WindowRead:
    """The window as the run read it: its sessions, its rows (the main arm's facts) and
    each clock's index over them."""

    sessions: list[str]
    rows: list[dict[str, Any]]
    indexes: dict[str, ClockIndex]


@dataclass(frozen=True)
class Outcome:
    """What the run produced: the cells, the probe, the trades by form, the abort (if
    any) and the ledger of attempts that failed on the harness's side. ``trades`` makes a
    cell's trades again (arm, clock), for the placebo split of a window that crosses the
    declared cutoff: a whole-release run makes too many to keep them all."""

    cells: list[model.Cell]
    probe: model.Probe
    by_form: dict[str, dict[str, Any]]
    aborted: str | None
    attempts: list[model.Attempt]
    trades: Callable[[str, str], list[Trade]] | None = None
    # what a fault plan did (``harness.receipt.faults``); None without one
    fault_injection: dict[str, Any] | None = None


@dataclass(frozen=True)
class Bound:
    """What the body binds: the release, the config as resolved (and its sha256), the
    trajectory written."""

    bundle: Bundle
    config: dict[str, Any]
    config_sha256: str
    trajectory: model.Trajectory


def _protocol(
    config: RunConfig,
    bundle: Bundle,
    span: model.Window,
    window: WindowRead,
    outcome: Outcome,
    prices: Prices | None,
    index: MarketIndex | None = None,
) -> model.Protocol:
    rows = window.rows
    stamped = sum(1 for r in rows if r.get("acceptance_at"))
    served = Counter({key: sum(getattr(c, key) for c in outcome.cells) for key in _SERVED})
    return model.Protocol(
        p1=model_version_part(config.model_version),
        p2=training_cutoff_part(config.training_cutoff, span.start, span.end),
        p3=retrieval_part(served, rows=len(rows), stamped=stamped, pit="pit" in window.indexes),
        p4=costs_part(
            prices.statement() if prices is not None else None,
            config.hold_sessions,
            config.costs,
            None if index is None or prices is None else index.statement(prices.basis),
        ),
        p5=provenance_part(bundle, span, window.sessions),
        p6=disaggregation_part(outcome.by_form),
    )


def _contamination(clocks: tuple[str, ...], cells: list[model.Cell]) -> dict[str, model.Delta]:
    """Per clock, the main arm's return minus each control arm's."""
    returns: dict[tuple[str, str], float | None] = {(c.arm, c.clock): c.total_return for c in cells}
    return {
        clock: model.Delta(
            main_minus_shifted=delta(returns.get(("main", clock)), returns.get(("shifted", clock))),
            main_minus_redacted=delta(
                returns.get(("main", clock)), returns.get(("redacted", clock))
            ),
        )
        for clock in clocks
    }


def placebo_part(
    p2: model.TrainingCutoffSlot,
    cells: Sequence[tuple[str, str]],
    clocks: Sequence[str],
    trades: Callable[[str, str], list[Trade]] | None,
) -> model.Placebo | UnsetType:
    """The placebo split, for a window that crosses the declared cutoff (absent
    otherwise: no other body changes); made from the run's own trades and prices."""
    if p2.check != "window_crosses_cutoff" or trades is None or not isinstance(p2.declared, str):
        return msgspec.UNSET
    split = placebo({cell: trades(*cell) for cell in cells}, clocks, p2.declared)
    return msgspec.convert(split, model.Placebo)


def crosses_cutoff(config: dict[str, Any]) -> bool:
    """A bound config whose window crosses its declared training cutoff (P2's check)."""
    p2 = training_cutoff_part(
        str(config.get("training_cutoff") or ""), str(config.get("start")), str(config.get("end"))
    )
    return p2.check == "window_crosses_cutoff"


def build_body(
    *,
    run_id: str,
    config: RunConfig,
    bound: Bound,
    window: WindowRead,
    outcome: Outcome,
    capabilities: model.Capabilities,
    network: model.Network,
    prices: Prices | None,
    index: MarketIndex | None = None,
) -> model.ReceiptBody:
    """The receipt body of a finished run."""
    resolved = msgspec.convert(bound.config, model.Config)
    span = model.Window(start=resolved.start, end=resolved.end)
    protocol = _protocol(config, bound.bundle, span, window, outcome, prices, index)
    gaps = [name for name, slot in protocol.slots().items() if slot.status == "gap"]
    invalidated = invalidated_by(
        [msgspec.to_builtins(a) for a in network.attempts],
        outcome.aborted,
        [] if isinstance(network.wire, UnsetType) else msgspec.to_builtins(network.wire),
    )
    limits = limits_for(
        msgspec.to_builtins(capabilities),
        dialect=None if isinstance(resolved.agent_dialect, UnsetType) else resolved.agent_dialect,
        pit_fallback_rows=protocol.p3.pit_fallback_rows if "pit" in config.clocks else None,
        rows=len(window.rows),
        costed=config.costs is not None,
        indexed=index is not None and prices is not None,
    )
    failed, exited = _unfinished(outcome.cells, outcome.probe)
    return model.ReceiptBody(
        receipt_version=RECEIPT_VERSION,
        run_id=run_id,
        harness=model.Harness(name=HARNESS_NAME, version=HARNESS_VERSION),
        valid=not invalidated and outcome.aborted is None,
        invalidated_by=invalidated,
        aborted=outcome.aborted,
        rankable=not failed and not exited,
        not_rankable_because=not_rankable_because(failed, exited),
        capabilities=capabilities,
        capability_line=capabilities.line,
        binding=model.Binding(
            bundle_content_digest=bound.bundle.content_digest,
            config_sha256=bound.config_sha256,
            trajectory_sha256=bound.trajectory.sha256,
        ),
        config=resolved,
        release=release_part(bound.bundle, span, window.rows),
        sessions=window.sessions,
        cells=outcome.cells,
        contamination=_contamination(config.clocks, outcome.cells),
        probe=outcome.probe,
        network=network,
        trajectory=bound.trajectory,
        protocol=protocol,
        protocol_complete=not gaps,
        protocol_gaps=gaps,
        limits=limits,
        attempts=outcome.attempts,
        placebo=placebo_part(
            protocol.p2,
            [(c.arm, c.clock) for c in outcome.cells],
            config.clocks,
            outcome.trades,
        ),
        fault_injection=(
            UNSET
            if outcome.fault_injection is None
            else msgspec.convert(outcome.fault_injection, model.FaultInjection)
        ),
    )


# An egress attempt refused by the model proxy (in the harness's process) carries this.
PROXY_CALL = "model proxy: "


def invalidated_by(
    attempts: list[dict[str, Any]], aborted: str | None, wire: Sequence[dict[str, Any]] = ()
) -> list[str]:
    """Why a run is invalid: each egress attempt (the wire's, then the guard's and the
    model proxy's), or the abort when there was none."""
    lines = [
        f"network_egress: {w['protocol']} {_target(w)} on the wire in {w['cell']}" for w in wire
    ]
    lines += [
        f"network_egress: {a['call']} {a['target']} at {a['site']}".replace("  ", " ")
        for a in attempts
    ]
    return lines + ([f"aborted: {aborted}"] if aborted and not lines else [])


def wire_counts(attempts: list[dict[str, Any]], wire: list[dict[str, Any]]) -> dict[str, Any]:
    """A wire-counted run's egress figures: what the wire saw and the model proxy refused
    (both outside the agent's reach) is the count; the guard's call sites are set beside
    it, and a difference between the two is said."""
    refused = sum(str(a["call"]).startswith(PROXY_CALL) for a in attempts)
    sites = len(attempts) - refused
    difference = None
    if sites != len(wire):
        difference = (
            f"the wire saw {len(wire)} attempt(s), the guard recorded {sites} call site(s) "
            + (
                "(one call can send several packets, as a name look-up sends two queries; a packet "
                "with no call site was sent around the guard, or its record was removed)"
                if len(wire) > sites
                else "(a call that sent nothing off loopback: a connection on loopback, a look-up "
                "or a socket that failed before it sent)"
            )
        )
    return {
        "counted": "wire",
        "clean": not attempts and not wire,
        "egress_attempts": len(wire) + refused,
        "wire": wire,
        "guard_sites": sites,
        "difference": difference,
    }


def _target(wire: dict[str, Any]) -> str:
    address, port = str(wire["address"]), wire.get("port")
    if port is None:
        return address
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def limits_for(
    capabilities: dict[str, Any],
    *,
    pit_fallback_rows: int | None,
    rows: int,
    dialect: str | None = None,
    costed: bool = False,
    indexed: bool = False,
) -> list[str]:
    """What the run does not guarantee: every capability that did not hold, the limits
    every run has (the returns' own worded for a cost model, with one more for a market
    index), and (with a pit clock) the rows that fall back to published_at."""
    from harness.isolation.drivers import not_enforced

    limits = not_enforced(capabilities)
    if capabilities.get("agent_process") == "remote":
        limits.insert(
            0,
            "agent_process: remote: "
            + str(capabilities.get("isolation_unavailable"))
            + "; nothing about its network, memory, files or state between cells is enforced "
            "(its decisions are checked as any agent's; `verify --reexecute` tests whether they "
            "depend on anything but what it was shown)",
        )
    elif capabilities.get("agent_process") != "isolated":
        limits.insert(
            0,
            "agent_process: the agent ran in the harness's own process ("
            + str(capabilities.get("isolation_unavailable"))
            + "); only the in-process socket guard applied",
        )
        limits.append(IN_PROCESS_NETWORK_LIMIT)
    limits += [COSTED_RETURNS_LIMIT if costed and x == LIMITS[-1] else x for x in LIMITS]
    if indexed:
        limits.append(MARKET_LIMIT)
    if dialect == "sharpebench":
        limits.append(SHARPEBENCH_PROBE_LIMIT)
    if pit_fallback_rows is not None:
        limits.append(
            f"pit clock: {pit_fallback_rows} of {rows} rows in the window carry no acceptance "
            "stamp and fall back to published_at (the dump clock's instant)"
        )
    return limits


def not_rankable_because(failed: list[str], exited: list[str]) -> list[str]:
    return [
        f"{what}: the harness failed to run it after its retries (a harness problem, "
        "not the agent's result)"
        for what in failed
    ] + [
        f"{what}: incomplete, {outcomes.AGENT_PROCESS_EXITED} in each of its "
        f"{outcomes.RUNTIME_ATTEMPTS} attempts, so it has no result"
        for what in exited
    ]


def _unfinished(cells: list[model.Cell], probe: model.Probe) -> tuple[list[str], list[str]]:
    """What has no result: cells (and the probe) the harness failed to run, and those
    whose every attempt ended with the agent's process exiting."""
    named: list[tuple[str, str]] = [(f"cell {c.arm}/{c.clock}", c.status) for c in cells]
    named.append(("probe", probe.status))
    return (
        [what for what, status in named if status == outcomes.HARNESS_ERROR],
        [what for what, status in named if status == outcomes.INCOMPLETE],
    )


def receipt_text(body: dict[str, Any] | model.ReceiptBody, emitted_at: str) -> str:
    if isinstance(body, model.ReceiptBody):
        body = model.body_dict(body)
    body_text = canonical.dumps(body)
    sha = "sha256:" + canonical.sha256_hex(body_text.encode())
    return (
        '{"body":'
        + body_text
        + ',"body_sha256":'
        + json.dumps(sha)
        + ',"emitted_at":'
        + json.dumps(emitted_at)
        + "}\n"
    )


def write_receipt(
    path: str | os.PathLike[str], body: dict[str, Any] | model.ReceiptBody
) -> dict[str, Any]:
    emitted_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = receipt_text(body, emitted_at)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)  # a reader never sees half a receipt
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def read_receipt(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """(parsed receipt, raw text); ReceiptError if it is not a receipt file."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ReceiptError(f"{file.name}: no such receipt") from None
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReceiptError(f"{file.name}: not a JSON receipt ({exc})") from None
    except RecursionError:
        raise ReceiptError(f"{file.name}: not a receipt (JSON nested too deep)") from None
    if not isinstance(data, dict) or set(data) != {"body", "body_sha256", "emitted_at"}:
        raise ReceiptError(f"{file.name}: a receipt holds exactly body, body_sha256 and emitted_at")
    if not isinstance(data["body"], dict):
        raise ReceiptError(f"{file.name}: body is not an object")
    return data, text
