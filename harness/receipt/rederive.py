"""Re-derive a run's scores from its artifacts, and compare them with its receipt.

What a verifier holds: the receipt, the trajectory, the release and (if the run was
priced) the price file. Every check here recomputes a number the receipt states from
those files with the same harness code that produced it, and says which field
differs. A check that cannot be made (no price file for a priced run) says so; it is
never counted as passed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

import msgspec

from harness import canonical
from harness.market.calendar import SessionTable, sessions_for
from harness.market.clocks import REACHABLE, knowable_at, knowable_before_acceptance
from harness.market.frictions import CostError, CostModel, cost_model
from harness.market.index import MarketIndex
from harness.market.prices import Prices
from harness.market.scoring import (
    Trade,
    add_by_form,
    delta,
    entered_before_acceptance,
    make_trades,
    total_return,
    trades_digest,
)
from harness.outcomes import (
    ABORTED,
    AGENT_ERROR,
    COMPLETE,
    HARNESS_ERROR,
    INCOMPLETE,
    NOT_APPLICABLE,
    NOT_RUN,
)
from harness.progress import OnProgress
from harness.receipt.binding import config_binding, stated_prices
from harness.receipt.build import (
    costs_slot,
    crosses_cutoff,
    disaggregation_slot,
    invalidated_by,
    limits_for,
    measured_fields,
    model_version_slot,
    not_rankable_because,
    provenance_slot,
    release_block,
    retrieval_slot,
    training_cutoff_slot,
    wire_counts,
)
from harness.receipt.faults import fault_report
from harness.receipt.placebo import placebo
from harness.receipt.usage import UsageTally
from harness.receipt.verify import check_receipt
from harness.release.bundle import Bundle
from harness.rundata.faultplan import FaultPlanError
from harness.rundata.probe_scoring import score_answer, verdict
from harness.rundata.trajectory import file_sha256
from harness.vocabulary import ARMS, CLOCKS


@dataclass
class Check:
    name: str
    status: str  # ok | mismatch | skipped
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass
class Rederivation:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "mismatch" for c in self.checks)

    @property
    def first_mismatch(self) -> Check | None:
        return next((c for c in self.checks if c.status == "mismatch"), None)

    def add(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, "ok" if ok else "mismatch", "" if ok else detail))


@dataclass
class _Trail:
    """What re-derivation reads back from a trajectory."""

    start: dict[str, Any] = field(default_factory=dict)
    picks: dict[tuple[str, str], list[tuple[str, list[str]]]] = field(default_factory=dict)
    probe_items: list[dict[str, Any]] = field(default_factory=list)
    egress_attempts: int = 0
    aborted: str | None = None
    failed: list[str] = field(default_factory=list)  # the harness could not run them
    incomplete: list[str] = field(default_factory=list)  # the agent's process exited
    attempts: list[dict[str, Any]] = field(default_factory=list)
    cells: dict[tuple[str, str], _CellTrail] = field(default_factory=dict)
    model_exchanges: dict[str, int] = field(default_factory=dict)
    capabilities: dict[str, Any] | None = None
    events: int = 0
    attempt_events: list[dict[str, Any]] = field(default_factory=list)
    wire_events: list[dict[str, Any]] = field(default_factory=list)  # without their times
    fault_events: list[dict[str, Any]] = field(default_factory=list)  # a fault plan's evidence
    usage: UsageTally = field(default_factory=UsageTally)  # the model exchanges, read

    def cell(self, event: dict[str, Any]) -> _CellTrail:
        key = (event["arm"], event["clock"])
        found = self.cells.get(key)
        if found is None:
            found = self.cells[key] = _CellTrail()
        return found


@dataclass
class _CellTrail:
    """What the trajectory records of one cell, event by event."""

    started: bool = False
    ended: bool = False
    failed_status: str | None = None
    fault: dict[str, Any] | None = None
    sessions: int = 0
    agent_errors: int = 0
    tool_calls: int = 0
    rows_served: int = 0
    fallbacks_served: int = 0
    rejected: int = 0
    ignored_orders: int = 0
    # decisions whose picks are not among their own buy orders (a sharpebench agent's)
    unordered_picks: int = 0

    def status(self) -> str:
        if self.failed_status is not None:
            return self.failed_status
        if self.fault is not None:
            return AGENT_ERROR
        if self.ended:
            return COMPLETE
        return ABORTED if self.started else NOT_RUN


def read_trail(trajectory: Path) -> _Trail:
    """The picks, probe items, egress attempts and failures a trajectory records."""
    trail = _Trail()
    with open(trajectory, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1:
                trail.events += 1
                trail.start = json.loads(line)
                if not isinstance(trail.start, dict):
                    raise TypeError("line 1 is not a run_start object")
                continue
            trail.events += 1
            # most lines are tool calls carrying many rows: counted from their typed
            # answer without building the rows (every other event is read whole)
            if line.startswith(b'{"args":'):
                _count_tool_call(trail, line, number)
                continue
            event = json.loads(line)
            if not isinstance(event, dict):
                raise TypeError(f"line {number} is not an event object")
            _take(trail, event)
            trail.usage.take(event)
    return trail


class _ServedRow(msgspec.Struct):
    """A row an answer served: only where its knowability came from is read."""

    known_at_source: str


class _Answer(msgspec.Struct):
    """What a tool answered, as far as counting goes: the rows it served (a list's or a
    search's ``rows``, a read's ``row``). Anything else in it (an echoed argument
    included) serves nothing, whatever its text."""

    rows: list[_ServedRow] | None = None
    row: _ServedRow | None = None


class _ToolCallEvent(msgspec.Struct):
    """A ``tool_call`` event, typed: its cell and its answer (its arguments, which the agent
    wrote, are skipped unread)."""

    event: Literal["tool_call"]
    arm: str
    clock: str
    result: _Answer


_TOOL_CALL = msgspec.json.Decoder(_ToolCallEvent)


def _count_tool_call(trail: _Trail, line: bytes, number: int) -> None:
    """A tool call's cell and the rows it served, from the event's typed answer (decoded
    without building the rows: only their ``known_at_source`` is read)."""
    try:
        call = _TOOL_CALL.decode(line)
    except msgspec.DecodeError as exc:  # a ValidationError too
        raise ValueError(f"line {number} is not a tool_call event ({exc})") from None
    cell = trail.cell({"arm": call.arm, "clock": call.clock})
    cell.tool_calls += 1
    answer = call.result
    served = answer.rows or ([answer.row] if answer.row is not None else [])
    cell.rows_served += len(served)
    if call.clock == "pit":
        cell.fallbacks_served += sum(r.known_at_source == "published_at" for r in served)


def _take(trail: _Trail, event: dict[str, Any]) -> None:
    """One event into the trail, if it is one that re-derivation reads."""
    kind = event.get("event")
    if kind in _CELL_EVENTS:
        _take_cell_event(trail.cell(event), kind, event)
    if kind == "decision":
        cell = (event["arm"], event["clock"])
        if event["picks"]:
            trail.picks.setdefault(cell, []).append((event["session"], list(event["picks"])))
    elif kind == "model_exchange":
        endpoint = str(event.get("endpoint"))
        trail.model_exchanges[endpoint] = trail.model_exchanges.get(endpoint, 0) + 1
    elif kind == "capabilities":
        trail.capabilities = {k: v for k, v in event.items() if k not in ("event", "seq")}
    elif kind == "probe_item":
        trail.probe_items.append(event)
    elif kind in ("network_attempt", "wire_attempt"):
        _take_egress(trail, event)
    elif kind == "run_end":
        trail.aborted = event.get("aborted")
    elif kind in ("cell_failed", "probe_failed"):
        what = "probe" if kind == "probe_failed" else f"cell {event['arm']}/{event['clock']}"
        if event.get("status", HARNESS_ERROR) == INCOMPLETE:
            trail.incomplete.append(what)
        else:
            trail.failed.append(what)
    elif kind in ("attempt_failed", "fault_event"):
        _take_kept(trail, kind, event)


def _take_kept(trail: _Trail, kind: str, event: dict[str, Any]) -> None:
    """A failed attempt's ledger entry, or a fault plan's evidence, as written."""
    if kind == "attempt_failed":
        trail.attempts.append({k: v for k, v in event.items() if k not in ("event", "seq")})
    else:
        trail.fault_events.append(event)


def _take_egress(trail: _Trail, event: dict[str, Any]) -> None:
    """A call site the guard recorded (or a request the model proxy refused), or an
    attempt on a cell's wire (its time left out: the receipt lists it without)."""
    if event["event"] == "wire_attempt":
        trail.wire_events.append(
            {k: v for k, v in event.items() if k not in ("event", "seq", "at")}
        )
        return
    trail.egress_attempts += 1
    trail.attempt_events.append({k: v for k, v in event.items() if k not in ("event", "seq")})


_CELL_EVENTS = frozenset(
    {"cell_start", "cell_end", "cell_failed", "agent_error", "session", "decision"}
)


def _take_cell_event(cell: _CellTrail, kind: str, event: dict[str, Any]) -> None:
    if kind == "cell_start":
        cell.started = True
    elif kind == "cell_end":
        cell.ended = True
    elif kind == "cell_failed":
        cell.failed_status = str(event.get("status", HARNESS_ERROR))
    elif kind == "agent_error":
        cell.fault = event.get("fault")
    elif kind == "session":
        cell.sessions += 1
    elif kind == "decision":
        cell.agent_errors += event.get("agent_error") is not None
        cell.rejected += len(event.get("rejected") or [])
        if "orders" in event:  # a sharpebench agent's: its picks come from its orders
            cell.ignored_orders += int(event.get("ignored_orders") or 0)
            bought = {
                o.get("symbol")
                for o in event["orders"] or []
                if isinstance(o, dict) and o.get("action") == "buy"
                and isinstance(o.get("target_weight"), int | float) and o["target_weight"] > 0
            }  # fmt: skip
            cell.unordered_picks += any(p not in bought for p in event.get("picks") or [])


def rederive(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    release: str | os.PathLike[str],
    prices: Prices | None = None,
    check_release: bool = True,
    progress: OnProgress | None = None,
    index: MarketIndex | None = None,
) -> Rederivation:
    """Recompute hashes, then every cell's trades and score from the trajectory.

    Each step reads only what the steps before it found sound: nothing scored from
    artifacts that do not match, or from a trajectory with a look-ahead pick, counts.
    ``progress`` is told each step done: the trajectory read, its claims checked, the
    release checked, then each cell scored. ``index``: the run's market index (its
    levels read from the file the config binds), to re-derive each cell's ``market``
    figures; without it they are skipped like the scores without the prices.
    """
    result = Rederivation()
    report, body = check_receipt(receipt)
    result.add("body_sha256", report.ok, "; ".join(report.failures))
    steps = 3 + len(body.get("cells") or [])
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    trail = _bound_trail(result, body, Path(trajectory))
    if trail is None:
        return result
    step()
    _check_claims(result, body, trail)
    step()
    bundle = _bound_release(result, body, trail, release, check_release)
    if not result.ok:
        return result
    step()
    basis = _price_basis(result, body, prices)
    if basis is None:
        return result
    market = _index_basis(result, body, index, basis[0])
    _check_cells(result, body, trail, bundle, *basis, cell_scored=step, index=market)
    return result


def _index_basis(
    result: Rederivation, body: dict[str, Any], index: MarketIndex | None, prices: Prices | None
) -> MarketIndex | None:
    """The index to re-derive the cells' market figures with: the one given, once its
    file is the one P4 states; None (and the figures skipped) otherwise."""
    p4 = (body.get("protocol") or {}).get("P4_costs_and_frictions") or {}
    stated = p4.get("benchmark_index") if isinstance(p4, dict) else None
    if not stated or prices is None:
        return None
    if index is None:
        result.checks.append(
            Check("cell_market", "skipped", "the run has a market index; no index file was given")
        )
        return None
    from_file = {
        **{
            k: index.statement(prices.basis)[k]
            for k in ("file_sha256", "levels", "basis", "verified_by_harness")
        },
        "symbol": index.symbol,
    }
    result.add(
        "protocol P4 benchmark_index",
        {k: stated.get(k) for k in from_file} == from_file,
        f"the index file gives {from_file}, P4 states { {k: stated.get(k) for k in from_file} }",
    )
    return index if result.ok else None


def _bound_trail(result: Rederivation, body: dict[str, Any], trajectory: Path) -> _Trail | None:
    """The trajectory's events, once its hash and config are the ones the receipt binds."""
    binding = body.get("binding") or {}
    got = file_sha256(trajectory)
    result.add(
        "trajectory_sha256",
        got == binding.get("trajectory_sha256"),
        f"trajectory hashes to {got}, the receipt binds {binding.get('trajectory_sha256')}",
    )
    if not result.ok:
        return None  # nothing read from artifacts that do not match means anything
    try:
        trail = read_trail(trajectory)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        result.add(
            "trajectory_format", False, f"the trajectory is not a pit-harness trajectory ({exc})"
        )
        return None
    problems = dict(config_binding(body, trail.start.get("config")))
    for check in ("config_sha256", "receipt_config"):
        result.add(check, check not in problems, problems.get(check, ""))
    return trail


def _check_claims(result: Rederivation, body: dict[str, Any], trail: _Trail) -> None:
    """What the body claims about the run as a whole: valid, rankable, cells, probe."""
    config = trail.start.get("config") or {}
    honest_valid = trail.egress_attempts == 0 and not trail.wire_events and trail.aborted is None
    result.add(
        "valid",
        body.get("valid") is honest_valid,
        f"the trajectory records {trail.egress_attempts} egress attempt(s), "
        f"{len(trail.wire_events)} on the wire, and aborted={trail.aborted!r}; "
        f"the receipt says valid={body.get('valid')}",
    )
    rankable = not trail.failed and not trail.incomplete
    result.add(
        "rankable",
        body.get("rankable") is rankable,
        f"the trajectory records harness failures in {trail.failed} and incomplete "
        f"{trail.incomplete}; the receipt says rankable={body.get('rankable')}",
    )
    result.add(
        "attempts",
        body.get("attempts", []) == trail.attempts,
        f"the trajectory records {len(trail.attempts)} failed attempt(s); the receipt's "
        f"ledger lists {len(body.get('attempts') or [])}, or not the same ones",
    )
    result.add(
        "sessions",
        body.get("sessions") == trail.start.get("sessions"),
        "the receipt's sessions are not the window the trajectory walked",
    )
    expected_cells = {(a, c) for a in config.get("arms", []) for c in config.get("clocks", [])}
    stated_cells = [(c["arm"], c["clock"]) for c in body.get("cells") or []]
    result.add(
        "cells",
        set(stated_cells) == expected_cells and len(stated_cells) == len(expected_cells),
        f"the receipt's cells {sorted(stated_cells)} are not the config's arms x clocks",
    )
    _check_agent_process(result, body, config)
    _check_cell_events(result, body, trail, config)
    _check_counts(result, body, trail)
    _check_derived_lines(result, body, trail, config)
    _check_probe(result, body.get("probe") or {}, trail.probe_items)
    _check_probe_status(result, body.get("probe") or {}, trail, config)
    _check_protocol(result, body, config)
    _check_faults(result, body, trail, config)
    _check_usage(result, body, trail, config)


def _check_usage(
    result: Rederivation, body: dict[str, Any], trail: _Trail, config: dict[str, Any]
) -> None:
    """Each cell's model usage, read again from the recorded exchanges; none without
    declared model endpoints (and then the receipt is as it always was)."""
    cells = body.get("cells") or []
    if not config.get("model_endpoints"):
        result.add(
            "model usage",
            all("usage" not in cell for cell in cells),
            "the run declared no model endpoints, yet its receipt states model usage",
        )
        return
    keys = [(str(cell.get("arm")), str(cell.get("clock"))) for cell in cells]
    derived = trail.usage.blocks(keys)
    placed = sum(block.exchanges for block in derived.values())
    result.add(
        "model usage",
        placed == trail.usage.exchanges,
        f"the trajectory records {trail.usage.exchanges} model exchange(s); the cells' "
        f"usage can account for {placed}",
    )
    for cell, key in zip(cells, keys, strict=True):
        label = f"cell {key[0]}/{key[1]} usage"
        where = _first_difference(cell.get("usage"), msgspec.to_builtins(derived[key]), label)
        result.add(label, where is None, f"{where} (read again from the recorded exchanges)")


def _check_faults(
    result: Rederivation, body: dict[str, Any], trail: _Trail, config: dict[str, Any]
) -> None:
    """The fault plan's report, drawn again from the plan and gathered again from the
    trajectory's ``fault_event`` events; no report, and no such event, without a plan."""
    stated = body.get("fault_injection")
    plan = config.get("fault_plan")
    if plan is None:
        result.add(
            "fault_injection",
            stated is None and not trail.fault_events,
            "the run names no fault plan, yet its receipt or trajectory reports faults",
        )
        return
    cells = [(a, c) for a in config.get("arms", []) for c in config.get("clocks", [])]
    try:
        derived = fault_report(
            plan, cells, list(trail.start.get("sessions") or []), trail.fault_events
        )
    except FaultPlanError as exc:
        result.add("fault_injection", False, f"the config's fault plan is refused: {exc}")
        return
    where = _first_difference(stated, derived, "fault_injection")
    result.add(
        "fault_injection",
        where is None,
        f"the receipt's fault report is not the one its trajectory and plan give ({where})",
    )


# A cell's fields that its events decide, by how the trail counts them.
_CELL_FIELDS: dict[str, Callable[[_CellTrail], Any]] = {
    "status": _CellTrail.status,
    "agent_fault": lambda c: c.fault,
    "sessions": lambda c: c.sessions,
    "agent_errors": lambda c: c.agent_errors,
    "tool_calls": lambda c: c.tool_calls,
    "rows_served": lambda c: c.rows_served,
    "pit_fallbacks_served": lambda c: c.fallbacks_served,
    "rejected_picks": lambda c: c.rejected,
}


def _check_cell_events(
    result: Rederivation, body: dict[str, Any], trail: _Trail, config: dict[str, Any]
) -> None:
    """Each cell's status, fault and counts, from its events: an agent_error cell
    turned complete, or a tool call hidden, is named."""
    sharpebench = config.get("agent_dialect") == "sharpebench"
    for cell in body.get("cells") or []:
        key = (cell.get("arm"), cell.get("clock"))
        walked = trail.cells.get(key) or _CellTrail()
        label = f"cell {key[0]}/{key[1]}"
        for name, derive in _CELL_FIELDS.items():
            derived = derive(walked)
            result.add(
                f"{label} {name}",
                cell.get(name) == derived,
                f"the trajectory gives {derived!r}, the receipt says {cell.get(name)!r}",
            )
        ignored = walked.ignored_orders if sharpebench else None
        result.add(
            f"{label} ignored_orders",
            cell.get("ignored_orders") == ignored,
            f"the trajectory gives {ignored!r}, the receipt says {cell.get('ignored_orders')!r}",
        )
        result.add(
            f"{label} picks from orders",
            walked.unordered_picks == 0,
            f"{walked.unordered_picks} decision(s) pick a row none of their buy orders names",
        )
        picks = len(trail.picks.get(key, []))
        result.add(
            f"{label} decisions_with_picks",
            cell.get("decisions_with_picks") == picks,
            f"the trajectory gives {picks}, the receipt says {cell.get('decisions_with_picks')}",
        )


def _check_counts(result: Rederivation, body: dict[str, Any], trail: _Trail) -> None:
    """Run-wide counts and the capabilities the trajectory recorded."""
    network = body.get("network") or {}
    attempts = network.get("attempts") or []
    if network.get("counted") == "wire":
        expected = wire_counts(trail.attempt_events, trail.wire_events)
        stated = {k: network.get(k) for k in expected}
        result.add(
            "network egress_attempts",
            stated == expected and len(attempts) == trail.egress_attempts,
            f"the trajectory gives {expected}; the receipt says {stated}",
        )
    else:
        result.add(
            "network egress_attempts",
            network.get("egress_attempts") == trail.egress_attempts == len(attempts)
            and network.get("clean") is (trail.egress_attempts == 0)
            and not trail.wire_events,
            f"the trajectory records {trail.egress_attempts} egress attempt(s) and "
            f"{len(trail.wire_events)} on the wire; the receipt says "
            f"{network.get('egress_attempts')} (listing {len(attempts)}), "
            f"clean={network.get('clean')}",
        )
    stated = (network.get("model_egress") or {}).get("exchanges") or {}
    recorded = {e: trail.model_exchanges.get(e, 0) for e in stated}
    result.add(
        "network model_egress exchanges",
        stated == recorded and set(trail.model_exchanges) <= set(stated),
        f"the trajectory records {trail.model_exchanges}, the receipt says {stated}",
    )
    described = body.get("trajectory") or {}
    result.add(
        "trajectory events",
        described.get("events") == trail.events
        and described.get("sha256") == (body.get("binding") or {}).get("trajectory_sha256"),
        f"the trajectory holds {trail.events} events, the receipt says {described.get('events')}",
    )
    if trail.capabilities is not None:
        result.add(
            "capabilities",
            body.get("capabilities") == trail.capabilities
            and body.get("capability_line") == trail.capabilities.get("line"),
            "the receipt's capabilities are not those the trajectory recorded at the run",
        )


def _check_derived_lines(
    result: Rederivation, body: dict[str, Any], trail: _Trail, config: dict[str, Any]
) -> None:
    """The run's identity and every line the receipt builds from other fields, built
    again by the same functions: run_id, invalidated_by, not_rankable_because, limits,
    the network block's policy and endpoints, P2 and P4's config-bound parts."""
    binding = body.get("binding") or {}
    harness = body.get("harness") or {}
    run_id = canonical.digest(
        {
            "config_sha256": binding.get("config_sha256"),
            "bundle_content_digest": binding.get("bundle_content_digest"),
            "harness": harness.get("version"),
        }
    )[7:23]
    result.add(
        "run_id",
        body.get("run_id") == run_id == trail.start.get("run_id")
        and harness == trail.start.get("harness"),
        f"the binding gives run id {run_id} (trajectory {trail.start.get('run_id')}), the "
        f"receipt says {body.get('run_id')}",
    )
    network = body.get("network") or {}
    result.add(
        "aborted", body.get("aborted") == trail.aborted, f"the trajectory says {trail.aborted!r}"
    )
    result.add(
        "network attempts",
        network.get("attempts") == trail.attempt_events,
        "the receipt's egress attempts are not those the trajectory records",
    )
    expected = invalidated_by(trail.attempt_events, trail.aborted, trail.wire_events)
    result.add(
        "invalidated_by",
        body.get("invalidated_by") == expected,
        f"re-derived {expected}, the receipt says {body.get('invalidated_by')}",
    )
    order = [f"cell {c.get('arm')}/{c.get('clock')}" for c in body.get("cells") or []]
    order.append("probe")
    reasons = not_rankable_because(
        [w for w in order if w in trail.failed], [w for w in order if w in trail.incomplete]
    )
    result.add(
        "not_rankable_because",
        body.get("not_rankable_because") == reasons,
        f"re-derived {reasons}, the receipt says {body.get('not_rankable_because')}",
    )
    p3 = (body.get("protocol") or {}).get("P3_retrieval_timestamps") or {}
    limits = limits_for(
        body.get("capabilities") or {},
        dialect=config.get("agent_dialect"),
        pit_fallback_rows=p3.get("pit_fallback_rows")
        if "pit" in config.get("clocks", [])
        else None,
        rows=int((body.get("release") or {}).get("rows") or 0),
        costed=config.get("costs") is not None,
        indexed=config.get("benchmark_index") is not None,
    )
    result.add("limits", body.get("limits") == limits, "the receipt's limits are not re-derived")
    _check_config_lines(result, body, config)


def _check_config_lines(result: Rederivation, body: dict[str, Any], config: dict[str, Any]) -> None:
    network = body.get("network") or {}
    endpoints = sorted(config.get("model_endpoints") or [])  # the config holds host:port
    result.add(
        "network policy and endpoints",
        network.get("policy") == config.get("network_policy")
        and (network.get("model_egress") or {}).get("endpoints") == endpoints,
        f"the bound config gives policy {config.get('network_policy')} and endpoints {endpoints}",
    )
    protocol = body.get("protocol") or {}
    p2 = {
        "kind": "declared_then_checked",
        **training_cutoff_slot(
            str(config.get("training_cutoff") or ""),
            str(config.get("start")),
            str(config.get("end")),
        ),
    }
    result.add(
        "protocol P2_training_cutoffs",
        protocol.get("P2_training_cutoffs") == p2,
        "P2 is not what the config's training cutoff and window give",
    )
    p4 = protocol.get("P4_costs_and_frictions") or {}
    stated = stated_prices(body)
    bound = config.get("prices") or {}  # the trajectory's config, bound like the body's
    same_prices = all(
        (stated or {}).get(k) == bound.get(k) for k in ("file_sha256", "source", "pulled_at")
    )
    stated_index = p4.get("benchmark_index") if isinstance(p4, dict) else None
    bound_index = config.get("benchmark_index") or {}
    same_index = all(
        (stated_index or {}).get(k) == bound_index.get(k)
        for k in ("file", "file_sha256", "source", "pulled_at", "symbol")
    )
    try:
        expected = costs_slot(
            stated, int(config.get("hold_sessions") or 0), config.get("costs"), stated_index
        )
    except (CostError, TypeError):
        expected = None
    result.add(
        "protocol P4_costs_and_frictions",
        p4 == expected
        and (same_prices if bound else stated is None)
        and (same_index if bound_index else stated_index is None),
        "P4 does not state the hold, the costs, the prices and the index the config binds",
    )
    probe = body.get("probe") or {}
    result.add("probe arm", probe.get("arm") == "shifted", "the probe is asked on the shifted arm")
    for cell in body.get("cells") or []:
        clock = cell.get("clock")
        result.add(
            f"cell {cell.get('arm')}/{clock} reachable",
            clock in REACHABLE and cell.get("reachable") is REACHABLE[clock],
            f"the {clock} clock's reachable is {REACHABLE.get(str(clock))}",
        )


def _check_agent_process(
    result: Rederivation, body: dict[str, Any], config: dict[str, Any]
) -> None:
    """A run configured in process cannot claim the sandbox, nor the reverse ("auto" may
    be either: the config does not say which it became)."""
    asked = config.get("agent_process", "auto")
    claimed = (body.get("capabilities") or {}).get("agent_process")
    result.add(
        "capabilities agent_process",
        asked == "auto" or claimed == asked,
        f"the bound config asks agent_process={asked}; the receipt claims {claimed}",
    )


def _check_protocol(result: Rederivation, body: dict[str, Any], config: dict[str, Any]) -> None:
    """The declared slots (P1, P2) are what the bound config declares, and the gaps and
    completeness the board shows follow from the slots."""
    protocol = body.get("protocol") or {}
    p1 = protocol.get("P1_model_version") or {}
    model = config.get("model_version") or ""
    result.add(
        "protocol P1_model_version",
        p1 == model_version_slot(model),
        "P1 does not state the model version the config declares",
    )
    gaps = [
        slot
        for slot, value in protocol.items()
        if isinstance(value, dict) and value.get("status") == "gap"
    ]
    result.add(
        "protocol_gaps",
        body.get("protocol_gaps") == gaps and body.get("protocol_complete") is (not gaps),
        f"the slots leave gaps {gaps}; the receipt says gaps {body.get('protocol_gaps')} and "
        f"protocol_complete={body.get('protocol_complete')}",
    )


def _bound_release(
    result: Rederivation,
    body: dict[str, Any],
    trail: _Trail,
    release: str | os.PathLike[str],
    check_release: bool,
) -> Bundle:
    config = trail.start.get("config") or {}
    bound = (body.get("binding") or {}).get("bundle_content_digest")
    bundle = Bundle.load(
        release, forms=config.get("forms") or None, start=config.get("start"), end=config.get("end")
    )
    if check_release:
        problems = bundle.check()
        result.add("release_files", not problems, "; ".join(problems))
    result.add(
        "bundle_content_digest",
        bundle.content_digest == bound,
        f"the release is {bundle.content_digest}, the receipt binds {bound}",
    )
    return bundle


def _price_basis(
    result: Rederivation, body: dict[str, Any], prices: Prices | None
) -> tuple[Prices | None, bool] | None:
    """(the prices to score with, whether scores go unchecked); None when the price file
    given is not the run's. An unpriced run is scored without prices (every return n/a);
    a priced run without its file has its trades counted and its scores skipped."""
    stated = stated_prices(body)
    if not stated:
        return None, False
    if prices is None:
        result.checks.append(
            Check("cell_scores", "skipped", "the run was priced; no price file was supplied")
        )
        return None, True
    if "sha256:" + prices.file_sha256 != stated.get("file_sha256"):
        result.add(
            "prices_file",
            False,
            f"price file is sha256:{prices.file_sha256}, the receipt states {stated.get('file_sha256')}",
        )
        return None
    # what the file's bytes decide (its source and pulled_at are the submitter's words,
    # checked against the bound config; a verifier loads the file under its own)
    from_file = {k: prices.statement()[k] for k in ("basis", "bars", "verified_by_harness")}
    result.add(
        "protocol P4 prices",
        {k: stated.get(k) for k in from_file} == from_file,
        f"the price file gives {from_file}, P4 states { {k: stated.get(k) for k in from_file} }",
    )
    return prices, False


def _check_cells(
    result: Rederivation,
    body: dict[str, Any],
    trail: _Trail,
    bundle: Bundle,
    prices: Prices | None,
    unpriced: bool,
    cell_scored: Callable[[], None] = lambda: None,
    index: MarketIndex | None = None,
) -> None:
    """Every cell's trades, acceptance counts and score, re-derived from its picks."""
    config = trail.start.get("config") or {}
    main_rows = bundle.rows("main")
    main_by_key = {r["row_key"]: r for r in main_rows}
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    index_of = {d.isoformat(): i for i, d in enumerate(table.sessions)}
    _check_release_facts(
        result, body, bundle, main_rows, table, index_of, trail.start.get("rows_in_window")
    )
    picks = as_main_picks(bundle, trail.picks)
    _check_knowability(result, picks, main_by_key, table, index_of)
    if not result.ok:
        return  # a look-ahead pick: nothing scored from this trajectory counts
    hold = int(config.get("hold_sessions", 5))
    scored = _Scoring(main_rows, main_by_key, table, hold, prices, unpriced)
    try:
        scored.costs = None if config.get("costs") is None else cost_model(config["costs"])
    except (CostError, TypeError) as exc:
        result.add("config costs", False, str(exc))
        return
    scored.index = index
    scored.indexed = config.get("benchmark_index") is not None
    if crosses_cutoff(config):
        scored.kept = {}  # the placebo split is made from every cell's trades
    scores: dict[tuple[str, str], float | None] = {}
    by_form: dict[str, dict[str, Any]] = {}
    for cell in body.get("cells") or []:
        key = (cell["arm"], cell["clock"])
        try:
            session_picks = [(index_of[day], keys) for day, keys in picks.get(key, [])]
        except KeyError as exc:
            result.add(f"cell {key[0]}/{key[1]}", False, f"the trajectory names session {exc}")
            continue
        score = _check_cell(result, cell, session_picks, scored, by_form)
        cell_scored()
        if score is not _UNSCORED:
            scores[key] = score
    if scores:
        _check_contamination(result, body.get("contamination") or {}, scores)
    if len(scores) == len(body.get("cells") or []):
        p6 = (body.get("protocol") or {}).get("P6_disaggregation") or {}
        result.add(
            "protocol P6_disaggregation",
            canonical.dumps(p6) == canonical.dumps(disaggregation_slot(by_form)),
            "P6's trades and returns by form are not those the cells' trades give",
        )
    _check_placebo(result, body, config, scored)


_UNSCORED = object()


def _check_placebo(
    result: Rederivation, body: dict[str, Any], config: dict[str, Any], scoring: _Scoring
) -> None:
    """A window that crosses the declared cutoff has a placebo split, made again from the
    cells' trades (skipped, like the cells' scores, without the run's price file); any
    other window has none."""
    stated = body.get("placebo")
    cutoff = str(config.get("training_cutoff") or "")
    if scoring.kept is None:
        if stated is not None:
            result.add(
                "placebo",
                False,
                "the receipt has a placebo split, but the window does not cross the declared "
                f"training cutoff ({cutoff or 'none declared'})",
            )
        return
    if stated is None:
        result.add(
            "placebo",
            False,
            f"the window crosses the declared training cutoff {cutoff}; the receipt has no "
            "placebo split",
        )
    elif scoring.unpriced:
        result.checks.append(
            Check("placebo", "skipped", "the run was priced; no price file was supplied")
        )
    else:
        derived = placebo(scoring.kept, config.get("clocks") or [], cutoff)
        where = _first_difference(stated, derived)
        result.add("placebo", where is None, f"{where}" if where else "")


def _first_difference(stated: Any, derived: Any, path: str = "placebo") -> str | None:
    """Where two canonical JSON values first differ, said as a reader compares them."""
    if isinstance(stated, dict) and isinstance(derived, dict):
        for key in sorted(set(stated) | set(derived)):
            if key not in derived:
                return f"{path}.{key}: the receipt has it, re-derivation gives none"
            if key not in stated:
                return f"{path}.{key}: re-derived {_shown(derived[key])}, the receipt has none"
            found = _first_difference(stated[key], derived[key], f"{path}.{key}")
            if found:
                return found
        return None
    if canonical.dumps(stated) == canonical.dumps(derived):
        return None
    return f"{path}: re-derived {_shown(derived)}, the receipt says {_shown(stated)}"


def _shown(value: Any) -> str:
    """A count as it is, a return as ``_as_return`` says it, an interval as its two ends."""
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return _as_return(value) if isinstance(value, float) else repr(value)


def as_main_picks(
    bundle: Bundle, picks: dict[tuple[str, str], list[tuple[str, list[str]]]]
) -> dict[tuple[str, str], list[tuple[str, list[str]]]]:
    """Each cell's picks as the main arm's keys of the same filings (a control arm's
    keys are its own; the release's order joins them). A key the arm does not hold (a
    main-arm key in a control cell among them) is named as no row of the release."""
    joins = {a: bundle.to_main(a) for a, _ in picks if a in ARMS and a != "main"}
    return {
        (arm, clock): [
            (
                day,
                [joins[arm].get(k, f"{k} (no {arm} row)") for k in keys] if arm in joins else keys,
            )
            for day, keys in decisions
        ]
        for (arm, clock), decisions in picks.items()
    }


@dataclass
class _Scoring:
    main_rows: list[dict[str, Any]]
    main_by_key: dict[str, dict[str, Any]]
    table: SessionTable
    hold: int
    prices: Prices | None
    unpriced: bool
    knowable_early: dict[str, int] = field(default_factory=dict)
    kept: dict[tuple[str, str], list[Trade]] | None = None  # each scored cell's trades
    costs: CostModel | None = None
    index: MarketIndex | None = None  # None: the market figures are not re-derived
    indexed: bool = False  # the config binds an index: its cells may hold market figures


def _check_cell(
    result: Rederivation,
    cell: dict[str, Any],
    session_picks: list[tuple[int, list[str]]],
    scoring: _Scoring,
    by_form: dict[str, dict[str, Any]],
) -> Any:
    """One cell's checks; its re-derived score, or _UNSCORED when it is not scored."""
    label = f"cell {cell['arm']}/{cell['clock']}"
    try:
        trades = make_trades(
            session_picks,
            main_by_key=scoring.main_by_key,
            table=scoring.table,
            hold_sessions=scoring.hold,
            prices=scoring.prices,
        )
    except KeyError as exc:
        result.add(label, False, f"the trajectory names {exc} which the release does not hold")
        return _UNSCORED
    entered = entered_before_acceptance(session_picks, scoring.main_by_key, scoring.table)
    result.add(
        f"{label} entered_before_acceptance",
        entered == cell.get("entered_before_acceptance"),
        f"re-derived {entered}, the receipt says {cell.get('entered_before_acceptance')}",
    )
    clock = cell["clock"]
    if clock not in scoring.knowable_early:
        scoring.knowable_early[clock] = knowable_before_acceptance(scoring.main_rows, clock)
    result.add(
        f"{label} knowable_before_acceptance",
        scoring.knowable_early[clock] == cell.get("knowable_before_acceptance"),
        f"re-derived {scoring.knowable_early[clock]}, the receipt says "
        f"{cell.get('knowable_before_acceptance')}",
    )
    result.add(
        f"{label} trades",
        len(trades) == cell["trades"],
        f"trajectory gives {len(trades)} trades, the receipt says {cell['trades']}",
    )
    if scoring.unpriced:
        return _UNSCORED
    if scoring.kept is not None:
        scoring.kept[(cell["arm"], cell["clock"])] = trades
    add_by_form(by_form, f"{cell['arm']}/{cell['clock']}", trades)
    priced = {
        "priced_trades": sum(1 for t in trades if t.status == "priced"),
        "unpriced": {
            s: sum(1 for t in trades if t.status == s)
            for s in ("no_prices", "no_ticker", "no_price")
            if any(t.status == s for t in trades)
        },
    }
    result.add(
        f"{label} priced_trades",
        {k: cell.get(k) for k in priced} == priced,
        f"re-derived {priced}, the receipt says { {k: cell.get(k) for k in priced} }",
    )
    digest = trades_digest(trades)
    result.add(
        f"{label} trades_sha256",
        digest == cell["trades_sha256"],
        f"re-derived {digest}, the receipt says {cell['trades_sha256']}",
    )
    score = total_return(trades)
    stated_score = cell["total_return"]
    same = (score is None and stated_score is None) or (
        score is not None
        and stated_score is not None
        and canonical.dumps(score) == canonical.dumps(stated_score)
    )
    result.add(
        f"{label} total_return",
        same,
        f"re-derived {_as_return(score)}, the receipt says {_as_return(stated_score)}",
    )
    _check_measured(result, label, cell, trades, scoring)
    return score


_MEASURED = ("total_return_after_costs", "market")


def _check_measured(
    result: Rederivation,
    label: str,
    cell: dict[str, Any],
    trades: list[Trade],
    scoring: _Scoring,
) -> None:
    """The cell's return after the config's costs and its market figures, derived again
    (the market figures only when the index file was given; a cell claiming either
    without the config binding it is refused)."""
    derived = measured_fields(
        trades,
        costs=scoring.costs,
        index=scoring.index,
        prices=scoring.prices,
        table=scoring.table,
        hold_sessions=scoring.hold,
    )
    stated = {k: cell[k] for k in _MEASURED if k in cell}
    if scoring.index is None and scoring.indexed and "market" in stated:
        stated.pop("market")  # skipped (said once, in _index_basis) or refused there
    for key in _MEASURED:
        if key in stated or key in derived:
            result.add(
                f"{label} {key}",
                canonical.dumps(stated.get(key)) == canonical.dumps(derived.get(key)),
                f"re-derived {_shown(derived.get(key))}, the receipt says {_shown(stated.get(key))}",
            )


def _as_return(value: object) -> str:
    """A return as a reader compares two: a percentage to four places, and the canonical
    six-decimal figure the check compares (a float as stored is no reading)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    return f"{value:+.4%} ({canonical.dumps(value)})"


def _check_release_facts(
    result: Rederivation,
    body: dict[str, Any],
    bundle: Bundle,
    main_rows: list[dict[str, Any]],
    table: SessionTable,
    index_of: dict[str, int],
    trail_rows: Any,
) -> None:
    """What the body says of the release and the window, counted from the release."""
    stated = body.get("release") or {}
    derived = release_block(bundle, bundle.start, bundle.end, main_rows)
    result.add("release", stated == derived, f"the release gives {derived}, the receipt {stated}")
    p3 = (body.get("protocol") or {}).get("P3_retrieval_timestamps") or {}
    cells = body.get("cells") or []
    derived_p3 = retrieval_slot(
        cells,
        rows=len(main_rows),
        stamped=sum(1 for r in main_rows if r.get("acceptance_at")),
        pit="pit" in {c.get("clock") for c in cells},
    )
    result.add(
        "protocol P3_retrieval_timestamps",
        p3 == derived_p3 and trail_rows == len(main_rows),
        f"the cells and the release give {derived_p3}, P3 says {p3}",
    )
    sessions = body.get("sessions") or []
    p5 = provenance_slot(bundle, bundle.start, bundle.end, sessions)
    result.add(
        "protocol P5_window_provenance",
        (body.get("protocol") or {}).get("P5_window_provenance") == p5,
        "P5 is not what the release and the window give",
    )
    if not sessions or sessions[-1] not in index_of:
        result.add("sessions", False, "the receipt's last session is not a session of the release")
        return
    last_bell = table.opens[index_of[sessions[-1]]]
    for cell in body.get("cells") or []:
        clock = cell.get("clock")
        if clock not in CLOCKS:
            continue
        unreached = sum(1 for r in main_rows if not knowable_at(r, clock, last_bell))
        result.add(
            f"cell {cell.get('arm')}/{clock} unreached_rows",
            cell.get("unreached_rows") == unreached,
            f"the release gives {unreached}, the receipt says {cell.get('unreached_rows')}",
        )


def _check_knowability(
    result: Rederivation,
    picks: dict[tuple[str, str], list[tuple[str, list[str]]]],
    main_by_key: dict[str, dict[str, Any]],
    table: SessionTable,
    index_of: dict[str, int],
) -> None:
    """Every pick the trajectory records was knowable at its session's bell on its
    cell's clock: recomputed from the release alone, whatever the runner claimed."""
    for (arm, clock), decisions in picks.items():
        if clock not in CLOCKS:
            result.add("knowability", False, f"cell {arm}/{clock}: no such clock")
            return
        for day, keys in decisions:
            if day not in index_of:
                result.add("knowability", False, f"cell {arm}/{clock}: no session {day}")
                return
            bell = table.opens[index_of[day]]
            for key in keys:
                row = main_by_key.get(key)
                if row is None:
                    result.add(
                        "knowability",
                        False,
                        f"cell {arm}/{clock} session {day}: row {key} is not in the release",
                    )
                    return
                if not knowable_at(row, clock, bell):
                    result.add(
                        "knowability",
                        False,
                        f"cell {arm}/{clock} session {day}: row {key} was not knowable at "
                        f"that session's bell on the {clock} clock",
                    )
                    return
    result.add("knowability", True)


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and canonical.dumps(a) == canonical.dumps(b)
    )


def _check_contamination(
    result: Rederivation, stated: dict[str, Any], scores: dict[tuple[str, str], float | None]
) -> None:
    clocks = sorted({clock for _, clock in scores})
    for clock in clocks:
        main = scores.get(("main", clock))
        for control in ("shifted", "redacted"):
            if ("main", clock) not in scores or (control, clock) not in scores:
                continue
            derived = delta(main, scores.get((control, clock)))
            given = (stated.get(clock) or {}).get(f"main_minus_{control}")
            result.add(
                f"contamination {clock} main_minus_{control}",
                _same(derived, given),
                f"re-derived {derived}, the receipt says {given}",
            )


def _check_probe_status(
    result: Rederivation, probe: dict[str, Any], trail: _Trail, config: dict[str, Any]
) -> None:
    """A probe the trajectory records as failed, or whose agent failed to start, says so;
    only a sharpebench agent's probe is not_applicable, and always is."""
    failed = "probe" in trail.failed or "probe" in trail.incomplete
    opened = trail.cells.get(("shifted", "probe"))
    stated = probe.get("status")
    derived: Any
    if failed:
        derived = INCOMPLETE if "probe" in trail.incomplete else HARNESS_ERROR
    elif opened is not None and opened.fault is not None:
        derived = AGENT_ERROR
    elif trail.probe_items:
        derived = stated if stated in (COMPLETE, AGENT_ERROR) else "complete or agent_error"
    elif config.get("agent_dialect") == "sharpebench" and config.get("probe_items"):
        derived = NOT_APPLICABLE if "shifted" in config.get("arms", []) else NOT_RUN
    else:
        derived = stated if stated in (COMPLETE, NOT_RUN) else "complete or not_run"
    result.add(
        "probe status",
        probe.get("status") == derived,
        f"the trajectory's probe events do not give status {probe.get('status')!r}",
    )


def _check_probe(
    result: Rederivation, probe: dict[str, Any], recorded: list[dict[str, Any]]
) -> None:
    """Every probe item re-scored from the trajectory's record of it, and the verdict."""
    items = probe.get("items") or []
    if len(items) != len(recorded):
        result.add(
            "probe items",
            False,
            f"the receipt has {len(items)} probe items, the trajectory {len(recorded)}",
        )
        return
    for item, event in zip(items, recorded, strict=True):
        rescored = score_answer(event["answer"], event["answer_key"])
        same = (
            item.get("item") == event.get("item")
            and item.get("row_key") == event.get("row_key")
            and item.get("answer") == event["answer"]
            and item.get("answer_key") == event["answer_key"]
            and item.get("score") == rescored
            and item.get("agent_error") == event.get("agent_error")
        )
        result.add(
            f"probe item {item.get('item')}",
            same,
            "its answer or score differs from the trajectory's, re-scored",
        )
    rescored_items = [score_answer(e["answer"], e["answer_key"]) for e in recorded]
    totals = {
        "total": len(recorded),
        "recovered": sum(1 for r in rescored_items if r["date_recovered"]),
        "year_only": sum(1 for r in rescored_items if r["year_recovered"]),
        "issuer_recovered": sum(1 for r in rescored_items if r["issuer_recovered"]),
        "agent_errors": sum(1 for e in recorded if e.get("agent_error")),
    }
    if items:
        stated = {key: probe.get(key) for key in totals}
        result.add(
            "probe totals",
            stated == totals,
            f"re-derived {totals}, the receipt says {stated}",
        )
    if items or probe.get("verdict") not in (None, "not_run"):
        derived = verdict(
            [{**e, "score": score_answer(e["answer"], e["answer_key"])} for e in recorded]
        )
        result.add(
            "probe verdict",
            probe.get("verdict") == derived,
            f"re-derived {derived}, the receipt says {probe.get('verdict')}",
        )
