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
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from harness import canonical
from harness.binding import config_binding
from harness.calendar import SessionTable, sessions_for
from harness.clocks import knowable_before_acceptance, known_at
from harness.outcomes import HARNESS_ERROR, INCOMPLETE
from harness.prices import Prices
from harness.probe import score_answer, verdict
from harness.release.bundle import Bundle
from harness.scoring import (
    delta,
    entered_before_acceptance,
    make_trades,
    total_return,
    trades_digest,
)
from harness.trajectory import file_sha256
from harness.verify import check_receipt
from harness.vocabulary import CLOCKS


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
    rejected: dict[tuple[str, str], int] = field(default_factory=dict)


def read_trail(trajectory: Path) -> _Trail:
    """The picks, probe items, egress attempts and failures a trajectory records."""
    trail = _Trail()
    with open(trajectory, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1:
                trail.start = json.loads(line)
                if not isinstance(trail.start, dict):
                    raise TypeError("line 1 is not a run_start object")
                continue
            # cheap filter first: most lines are tool calls carrying many rows (an event
            # whose first key is "arm", cell_failed among them, is read like any other)
            if line.startswith(b'{"args":'):
                continue
            event = json.loads(line)
            if not isinstance(event, dict):
                raise TypeError(f"line {number} is not an event object")
            _take(trail, event)
    return trail


def _take(trail: _Trail, event: dict[str, Any]) -> None:
    """One event into the trail, if it is one that re-derivation reads."""
    kind = event.get("event")
    if kind == "decision":
        cell = (event["arm"], event["clock"])
        trail.rejected[cell] = trail.rejected.get(cell, 0) + len(event.get("rejected") or [])
        if event["picks"]:
            trail.picks.setdefault(cell, []).append((event["session"], list(event["picks"])))
    elif kind == "probe_item":
        trail.probe_items.append(event)
    elif kind == "network_attempt":
        trail.egress_attempts += 1
    elif kind == "run_end":
        trail.aborted = event.get("aborted")
    elif kind in ("cell_failed", "probe_failed"):
        what = "probe" if kind == "probe_failed" else f"cell {event['arm']}/{event['clock']}"
        if event.get("status", HARNESS_ERROR) == INCOMPLETE:
            trail.incomplete.append(what)
        else:
            trail.failed.append(what)
    elif kind == "attempt_failed":
        trail.attempts.append({k: v for k, v in event.items() if k not in ("event", "seq")})


def rederive(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    release: str | os.PathLike[str],
    prices: Prices | None = None,
    check_release: bool = True,
) -> Rederivation:
    """Recompute hashes, then every cell's trades and score from the trajectory.

    Each step reads only what the steps before it found sound: nothing scored from
    artifacts that do not match, or from a trajectory with a look-ahead pick, counts.
    """
    result = Rederivation()
    report, body = check_receipt(receipt)
    result.add("body_sha256", report.ok, "; ".join(report.failures))
    trail = _bound_trail(result, body, Path(trajectory))
    if trail is None:
        return result
    _check_claims(result, body, trail)
    bundle = _bound_release(result, body, trail, release, check_release)
    if not result.ok:
        return result
    basis = _price_basis(result, body, prices)
    if basis is None:
        return result
    _check_cells(result, body, trail, bundle, *basis)
    return result


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
    honest_valid = trail.egress_attempts == 0 and trail.aborted is None
    result.add(
        "valid",
        body.get("valid") is honest_valid,
        f"the trajectory records {trail.egress_attempts} egress attempt(s) and aborted={trail.aborted!r}; "
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
    for cell in body.get("cells") or []:
        key = (cell.get("arm"), cell.get("clock"))
        walked = trail.rejected.get(key, 0)
        result.add(
            f"cell {key[0]}/{key[1]} rejected_picks",
            cell.get("rejected_picks") == walked,
            f"the trajectory rejects {walked} pick(s); the receipt says {cell.get('rejected_picks')}",
        )
    _check_agent_process(result, body, config)
    expected_cells = {(a, c) for a in config.get("arms", []) for c in config.get("clocks", [])}
    stated_cells = [(c["arm"], c["clock"]) for c in body.get("cells") or []]
    result.add(
        "cells",
        set(stated_cells) == expected_cells and len(stated_cells) == len(expected_cells),
        f"the receipt's cells {sorted(stated_cells)} are not the config's arms x clocks",
    )
    _check_probe(result, body.get("probe") or {}, trail.probe_items)
    _check_protocol(result, body, config)


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
    p2 = protocol.get("P2_training_cutoffs") or {}
    model, cutoff = config.get("model_version") or "", config.get("training_cutoff") or ""
    result.add(
        "protocol P1_model_version",
        p1.get("status") == ("declared" if model else "gap")
        and (p1.get("declared") or "") == model,
        "P1 does not state the model version the config declares",
    )
    result.add(
        "protocol P2_training_cutoffs",
        p2.get("status") == ("declared" if cutoff else "gap")
        and (p2.get("declared") or "") == cutoff,
        "P2 does not state the training cutoff the config declares",
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
    stated = ((body.get("protocol") or {}).get("P4_costs_and_frictions") or {}).get("prices")
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
    return prices, False


def _check_cells(
    result: Rederivation,
    body: dict[str, Any],
    trail: _Trail,
    bundle: Bundle,
    prices: Prices | None,
    unpriced: bool,
) -> None:
    """Every cell's trades, acceptance counts and score, re-derived from its picks."""
    config = trail.start.get("config") or {}
    main_rows = bundle.rows("main")
    main_by_key = {r["row_key"]: r for r in main_rows}
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    index_of = {d.isoformat(): i for i, d in enumerate(table.sessions)}
    _check_knowability(result, trail.picks, main_by_key, table, index_of)
    if not result.ok:
        return  # a look-ahead pick: nothing scored from this trajectory counts
    hold = int(config.get("hold_sessions", 5))
    scored = _Scoring(main_rows, main_by_key, table, hold, prices, unpriced)
    scores: dict[tuple[str, str], float | None] = {}
    for cell in body.get("cells") or []:
        key = (cell["arm"], cell["clock"])
        try:
            session_picks = [(index_of[day], keys) for day, keys in trail.picks.get(key, [])]
        except KeyError as exc:
            result.add(f"cell {key[0]}/{key[1]}", False, f"the trajectory names session {exc}")
            continue
        score = _check_cell(result, cell, session_picks, scored)
        if score is not _UNSCORED:
            scores[key] = score
    if scores:
        _check_contamination(result, body.get("contamination") or {}, scores)


_UNSCORED = object()


@dataclass
class _Scoring:
    main_rows: list[dict[str, Any]]
    main_by_key: dict[str, dict[str, Any]]
    table: SessionTable
    hold: int
    prices: Prices | None
    unpriced: bool
    knowable_early: dict[str, int] = field(default_factory=dict)


def _check_cell(
    result: Rederivation,
    cell: dict[str, Any],
    session_picks: list[tuple[int, list[str]]],
    scoring: _Scoring,
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
        f"{label} total_return", same, f"re-derived {score}, the receipt says {stated_score}"
    )
    return score


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
                if known_at(row, clock)[0] >= bell:
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
            item.get("answer") == event["answer"]
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
