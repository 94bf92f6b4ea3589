"""The receipt: a canonical body, its sha256, and a wall-clock stamp outside it.

The file is one canonical line ``{"body": ..., "body_sha256": ..., "emitted_at": ...}``
so that any byte changed inside the body either changes its hash or breaks the canonical
layout. ``emitted_at`` is the only field allowed to differ between two runs of the same
configuration over the same release. The ledger of attempts that failed on our side
(``attempts``) is inside the body: a run that needed a retry says so, and what its
failed attempts did (egress, model exchanges) counts.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import canonical, outcomes
from harness.market.scoring import delta
from harness.version import HARNESS_NAME, HARNESS_VERSION, RECEIPT_VERSION

if TYPE_CHECKING:
    from harness.market.prices import Prices
    from harness.release.bundle import Bundle
    from harness.runs.config import RunConfig
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


def training_cutoff_slot(cutoff: str, start: str, end: str) -> dict[str, Any]:
    if not cutoff:
        return {"status": "gap", "declared": None}
    day = date.fromisoformat(cutoff)
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
    return {"status": "declared", "declared": cutoff, "check": check, "meaning": meaning}


def model_version_slot(model_version: str) -> dict[str, Any]:
    """P1: the model version as the config declares it, or a gap."""
    return {
        "kind": "declared",
        "status": "declared" if model_version else "gap",
        "declared": model_version or None,
    }


def provenance_slot(bundle: Bundle, start: str, end: str, sessions: list[str]) -> dict[str, Any]:
    """P5: the release and the window the run walked."""
    return {
        "kind": "measured",
        "status": "measured",
        "release": bundle.name,
        "content_digest": bundle.content_digest,
        "provenance": bundle.manifest.get("provenance"),
        "source_kind": (bundle.manifest.get("source") or {}).get("kind"),
        "window": {"start": start, "end": end},
        "forms": list(bundle.forms),
        "sessions": len(sessions),
        "first_session": sessions[0] if sessions else None,
        "last_session": sessions[-1] if sessions else None,
    }


def disaggregation_slot(by_form: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """P6: trades and returns per form, per cell."""
    return {"kind": "measured", "status": "measured", "by_form": by_form}


def release_block(
    bundle: Bundle, start: str, end: str, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The release as the run read it: its name, the window, the forms and their rows."""
    forms = Counter(r["form"] for r in rows)
    return {
        "name": bundle.name,
        "window": {"start": start, "end": end},
        "forms": list(bundle.forms),
        "rows": len(rows),
        "rows_by_form": dict(sorted(forms.items())),
    }


def retrieval_slot(
    cells: list[dict[str, Any]], *, rows: int, stamped: int, pit: bool
) -> dict[str, Any]:
    """P3: what the cells were served, and how many of the window's rows carry a stamp."""
    return {
        "kind": "measured",
        "status": "measured",
        "tool_calls": sum(c["tool_calls"] for c in cells),
        "rows_served": sum(c["rows_served"] for c in cells),
        "rows_in_window": rows,
        "acceptance_stamped_rows": stamped,
        "pit_fallback_rows": (rows - stamped) if pit else 0,
        "pit_fallbacks_served": sum(c["pit_fallbacks_served"] for c in cells),
        "rule": "a row is served only when its clock's known_at is strictly before the session's opening bell",
    }


def costs_slot(statement: dict[str, Any] | None, hold_sessions: int) -> dict[str, Any]:
    """P4: the prices as stated (declared, not verified) and the frictions not modelled."""
    return {
        "kind": "declared",
        "status": "declared",
        "prices": statement,
        "entry": (
            "long at the entry session's opening auction"
            if statement is None or statement.get("basis") == "open"
            else "long at the entry session's close (close-only price file)"
        ),
        "hold_sessions": hold_sessions,
        "costs": "none modelled",
        "slippage": "none modelled",
        "shorts": False,
    }


def _protocol(
    *,
    config: RunConfig,
    bundle: Bundle,
    start: str,
    end: str,
    cells: list[dict[str, Any]],
    prices: Prices | None,
    rows: list[dict[str, Any]],
    indexes: dict[str, ClockIndex],
    sessions: list[str],
    by_form: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    stamped = sum(1 for r in rows if r.get("acceptance_at"))
    pit = indexes.get("pit")
    return {
        "P1_model_version": model_version_slot(config.model_version),
        "P2_training_cutoffs": {
            "kind": "declared_then_checked",
            **training_cutoff_slot(config.training_cutoff, start, end),
        },
        "P3_retrieval_timestamps": retrieval_slot(
            cells, rows=len(rows), stamped=stamped, pit=pit is not None
        ),
        "P4_costs_and_frictions": costs_slot(
            prices.statement() if prices is not None else None, config.hold_sessions
        ),
        "P5_window_provenance": provenance_slot(bundle, start, end, sessions),
        "P6_disaggregation": disaggregation_slot(by_form),
    }


def build_body(
    *,
    run_id: str,
    config: RunConfig,
    config_body: dict[str, Any],
    config_sha: str,
    bundle: Bundle,
    trajectory_sha: str,
    trajectory_path: str,
    events: int,
    sessions: list[str],
    cells: list[dict[str, Any]],
    probe: dict[str, Any],
    network: dict[str, Any],
    capabilities: dict[str, Any],
    aborted: str | None,
    prices: Prices | None,
    rows: list[dict[str, Any]],
    indexes: dict[str, ClockIndex],
    by_form: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    start, end = config_body["start"], config_body["end"]
    by_cell = {(c["arm"], c["clock"]): c for c in cells}
    contamination = {}
    for clock in config.clocks:
        main = by_cell.get(("main", clock), {}).get("total_return")
        contamination[clock] = {
            "main_minus_shifted": delta(
                main, by_cell.get(("shifted", clock), {}).get("total_return")
            ),
            "main_minus_redacted": delta(
                main, by_cell.get(("redacted", clock), {}).get("total_return")
            ),
        }
    protocol = _protocol(
        config=config,
        bundle=bundle,
        start=start,
        end=end,
        cells=cells,
        prices=prices,
        rows=rows,
        indexes=indexes,
        sessions=sessions,
        by_form=by_form,
    )
    gaps = [slot for slot, value in protocol.items() if value["status"] == "gap"]
    invalidated = invalidated_by(network["attempts"], aborted)
    limits = limits_for(
        capabilities,
        pit_fallback_rows=(
            protocol["P3_retrieval_timestamps"]["pit_fallback_rows"]
            if "pit" in config.clocks
            else None
        ),
        rows=len(rows),
    )
    failed, exited = _unfinished(cells, probe)
    return {
        "receipt_version": RECEIPT_VERSION,
        "run_id": run_id,
        "harness": {"name": HARNESS_NAME, "version": HARNESS_VERSION},
        "valid": not invalidated and aborted is None,
        "invalidated_by": invalidated,
        "aborted": aborted,
        "rankable": not failed and not exited,
        "not_rankable_because": not_rankable_because(failed, exited),
        "capabilities": capabilities,
        "capability_line": capabilities["line"],
        "binding": {
            "bundle_content_digest": bundle.content_digest,
            "config_sha256": config_sha,
            "trajectory_sha256": trajectory_sha,
        },
        "config": config_body,
        "release": release_block(bundle, start, end, rows),
        "sessions": sessions,
        "cells": cells,
        "contamination": contamination,
        "probe": probe,
        "network": network,
        "trajectory": {
            "path": Path(trajectory_path).name,
            "events": events,
            "sha256": trajectory_sha,
        },
        "protocol": protocol,
        "protocol_complete": not gaps,
        "protocol_gaps": gaps,
        "limits": limits,
    }


def invalidated_by(attempts: list[dict[str, Any]], aborted: str | None) -> list[str]:
    """Why a run is invalid: each egress attempt, or the abort when there was none."""
    lines = [
        f"network_egress: {a['call']} {a['target']} at {a['site']}".replace("  ", " ")
        for a in attempts
    ]
    return lines + ([f"aborted: {aborted}"] if aborted and not lines else [])


def limits_for(
    capabilities: dict[str, Any], *, pit_fallback_rows: int | None, rows: int
) -> list[str]:
    """What the run does not guarantee: every capability that did not hold, the limits
    every run has, and (with a pit clock) the rows that fall back to published_at."""
    from harness.isolation.drivers import not_enforced

    limits = not_enforced(capabilities)
    if capabilities.get("agent_process") != "isolated":
        limits.insert(
            0,
            "agent_process: the agent ran in the harness's own process ("
            + str(capabilities.get("isolation_unavailable"))
            + "); only the in-process socket guard applied",
        )
        limits.append(IN_PROCESS_NETWORK_LIMIT)
    limits += LIMITS
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


def _unfinished(cells: list[dict[str, Any]], probe: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What has no result: cells (and the probe) the harness failed to run, and those
    whose every attempt ended with the agent's process exiting."""
    named = [(f"cell {c['arm']}/{c['clock']}", c["status"]) for c in cells]
    named.append(("probe", probe.get("status")))
    return (
        [what for what, status in named if status == outcomes.HARNESS_ERROR],
        [what for what, status in named if status == outcomes.INCOMPLETE],
    )


def receipt_text(body: dict[str, Any], emitted_at: str) -> str:
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


def write_receipt(path: str | os.PathLike[str], body: dict[str, Any]) -> dict[str, Any]:
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
