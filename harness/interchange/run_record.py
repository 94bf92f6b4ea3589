"""A verified run as an Every Eval Ever record.

Only a run that verifies is exported (:func:`verified_body`): its hashes against the
trajectory and the release the reader holds, and every score re-derived from them (with
its price file, for a priced run) by ``harness.receipt.rederive``, as ``pit-harness
verify`` does. A run the guard invalidated verifies as a record but is not a result, and
is refused too. What the record then says is the receipt's, figure by figure:

- per cell (arm x clock): ``total_return`` (the mean of its priced trades' returns, equal
  capital, not compounded; -1 at worst, no ceiling) where the run was priced, and its
  trade count; the leaky clock's cells labelled unreachable, as the receipt labels them;
- per clock: the contamination deltas, main minus shifted and main minus redacted;
- the mask probe's verdict (four levels) and the share of its items whose real date the
  agent recovered.

Every result names the release it ran on (its content digest; the source type
``other``: a release is a private dataset, with its provenance stated), and the record's
source metadata carries the run's id, its hashes, its capability line and what
verification proved (``hashes_verified``: the arithmetic, not a re-run of the agent).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from harness.interchange.every_eval_ever import (
    SCHEMA_VERSION,
    InterchangeError,
    Source,
    continuous,
    epoch_seconds,
    model_info,
    text_details,
    validated,
)
from harness.market.index import bound_index
from harness.market.prices import PriceError, load_prices
from harness.receipt.build import ReceiptError
from harness.receipt.rederive import rederive
from harness.receipt.verify import verify
from harness.version import HARNESS_VERSION
from harness.vocabulary import ARMS, CLOCKS

VERDICTS = ("mask_holds", "mask_leaks", "inconclusive", "no_items")
VERIFICATION = (
    "hashes_verified: body_sha256, the trajectory's and the release's hashes recomputed, and "
    "every score re-derived from the trajectory and the release by pit-harness {version}; "
    "the agent was not run again"
)


def verified_body(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    bundle: str | os.PathLike[str],
    prices: str | os.PathLike[str] | None = None,
    index: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The receipt's body, once its hashes hold against the trajectory and the release
    and every score is re-derived from them; InterchangeError naming the first check that
    fails, a check that could not be made (a priced run without its price file, a run
    measured against an index without the index file), or a run that is not a result
    (invalidated)."""
    try:
        report = verify(receipt, trajectory=trajectory, bundle=bundle)
    except ReceiptError as exc:
        raise InterchangeError(f"not verified: {exc}") from None
    if not report.ok:
        raise InterchangeError(f"not verified: {report.failures[0]}")
    loaded = None
    if prices is not None:
        try:  # the statement is the receipt's; only the file's bytes are compared
            loaded = load_prices(prices, source="as stated in the receipt", pulled_at="")
        except PriceError as exc:
            raise InterchangeError(f"not verified: prices: {exc}") from None
    market = None
    if index is not None:
        bound = (report.body.get("config") or {}).get("benchmark_index") or {}
        try:
            market = bound_index(index, bound)
        except PriceError as exc:
            raise InterchangeError(f"not verified: index: {exc}") from None
    try:
        result = rederive(
            receipt, trajectory=trajectory, release=bundle, prices=loaded, index=market
        )
    except ReceiptError as exc:
        raise InterchangeError(f"not verified: {exc}") from None
    wrong = result.first_mismatch
    if wrong is not None:
        raise InterchangeError(f"not verified: {wrong.name}: {wrong.detail}")
    skipped = [c for c in result.checks if c.status == "skipped"]
    if skipped:
        wanted = "index" if skipped[0].name == "cell_market" else "price"
        raise InterchangeError(
            f"not verified: {skipped[0].name} skipped ({skipped[0].detail}): pass the run's "
            f"{wanted} file, so that every figure exported is one re-derived"
        )
    body = report.body
    if body.get("valid") is not True:
        why = ", ".join(body.get("invalidated_by") or []) or "invalid"
        raise InterchangeError(f"not a result: the run is invalidated ({why})")
    return body


def without_market(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with each cell's ``market`` figures left out: for an exporter that has not
    re-derived them against the run's index file (the site holds the submitter's prices,
    never their index), so that no figure it exports is one it did not check."""
    return {**body, "cells": [{k: v for k, v in c.items() if k != "market"} for c in body["cells"]]}


def _dataset(body: dict[str, Any]) -> dict[str, Any]:
    """The release the run walked, as ``source_data`` (a private dataset, named by its
    content digest, with its provenance and the prices as their submitter states them)."""
    slots = body["protocol"]
    p4, p5 = slots["P4_costs_and_frictions"], slots["P5_window_provenance"]
    prices = p4.get("prices")
    return {
        "dataset_name": body["release"]["name"],
        "source_type": "other",
        "additional_details": text_details(
            {
                "content_digest": body["binding"]["bundle_content_digest"],
                "window": f"{body['release']['window']['start']}..{body['release']['window']['end']}",
                "forms": ",".join(body["release"]["forms"]),
                "rows": body["release"]["rows"],
                "sessions": p5["sessions"],
                "provenance": p5.get("provenance"),
                "source_kind": p5.get("source_kind"),
                "prices_source_as_stated": prices["source"] if prices else "no prices",
                "prices_pulled_at_as_stated": prices["pulled_at"] if prices else None,
                "prices_basis": prices["basis"] if prices else None,
            }
        ),
    }


def _cell_results(body: dict[str, Any], dataset: dict[str, Any]) -> list[dict[str, Any]]:
    results = []
    hold = body["config"]["hold_sessions"]
    for cell in sorted(
        body["cells"], key=lambda c: (ARMS.index(c["arm"]), CLOCKS.index(c["clock"]))
    ):
        arm, clock = cell["arm"], cell["clock"]
        name = f"pit.cell.{arm}.{clock}"
        reach = (
            "" if cell["reachable"] else " The leaky clock's entries are unreachable (labelled so)."
        )
        details = text_details(
            {
                "status": cell["status"],
                "reachable": cell["reachable"],
                "trades": cell["trades"],
                "priced_trades": cell["priced_trades"],
                "unpriced": cell["unpriced"],
                "sessions": cell["sessions"],
                "rows_served": cell["rows_served"],
                "entered_before_acceptance": cell["entered_before_acceptance"],
                "trades_sha256": cell["trades_sha256"],
            }
        )
        if cell["total_return"] is not None:
            results.append(
                {
                    "evaluation_result_id": f"{name}.total_return",
                    "evaluation_name": name,
                    "source_data": dataset,
                    "metric_config": continuous(
                        metric_id="pit-harness.total_return",
                        name="total return",
                        kind="return",
                        unit="proportion",
                        description=(
                            f"Arm {arm}, clock {clock}: the mean of the cell's priced trades' "
                            f"returns (long at the entry session's opening auction, out {hold} "
                            "sessions later, no costs; equal capital per trade, not compounded); "
                            f"unpriced trades counted, left out of the mean.{reach}"
                        ),
                        lower_is_better=False,
                        bounds=(-1.0, "Infinity"),
                    ),
                    "score_details": {"score": cell["total_return"], "details": details},
                }
            )
        results += _measured_results(cell, name, dataset, details, reach)
        results.append(
            {
                "evaluation_result_id": f"{name}.trades",
                "evaluation_name": name,
                "source_data": dataset,
                "metric_config": continuous(
                    metric_id="pit-harness.trades",
                    name="trades",
                    kind="count",
                    unit="trades",
                    description=(
                        f"Arm {arm}, clock {clock}: the positions the agent's picks opened, "
                        f"priced or not; a count, not a score.{reach}"
                    ),
                    lower_is_better=False,
                    bounds=(0, "Infinity"),
                ),
                "score_details": {"score": cell["trades"], "details": details},
            }
        )
    return results


# a cell's figures beyond its gross return, when its config asked for them (a cost model,
# a market index): (key in the cell, metric id, name, kind, unit, bounds, description)
_MEASURED: tuple[tuple[str, str, str, str, str, tuple[float | str, float | str], str], ...] = (
    (
        "total_return_after_costs", "pit-harness.total_return_after_costs",
        "total return after costs", "return", "proportion", (-1.0, "Infinity"),
        "the mean priced trade's return net of the config's cost model (a fee on the "
        "notional traded at entry and at exit)",
    ),
    (
        "excess_return", "pit-harness.excess_return", "excess return", "return",
        "proportion", ("-Infinity", "Infinity"),
        "the mean priced trade's return less the config's market index over the same hold",
    ),
    (
        "beta", "pit-harness.beta", "beta", "score", "ratio", ("-Infinity", "Infinity"),
        "least squares of the daily returns of the open trades on the index's daily moves",
    ),
)  # fmt: skip


def _measured_results(
    cell: dict[str, Any], name: str, dataset: dict[str, Any], details: dict[str, str], reach: str
) -> list[dict[str, Any]]:
    values = {**(cell.get("market") or {}), **cell}
    results = []
    for key, metric, label, kind, unit, bounds, said in _MEASURED:
        if values.get(key) is None:
            continue
        results.append(
            {
                "evaluation_result_id": f"{name}.{key}",
                "evaluation_name": name,
                "source_data": dataset,
                "metric_config": continuous(
                    metric_id=metric,
                    name=label,
                    kind=kind,
                    unit=unit,
                    description=f"Arm {cell['arm']}, clock {cell['clock']}: {said}.{reach}",
                    lower_is_better=False,
                    bounds=bounds,
                ),
                "score_details": {"score": values[key], "details": details},
            }
        )
    return results


def _delta_results(body: dict[str, Any], dataset: dict[str, Any]) -> list[dict[str, Any]]:
    results = []
    for clock in [c for c in CLOCKS if c in body["contamination"]]:
        for control in ("shifted", "redacted"):
            value = body["contamination"][clock][f"main_minus_{control}"]
            if value is None:
                continue
            results.append(
                {
                    "evaluation_result_id": f"pit.contamination.{clock}.main_minus_{control}",
                    "evaluation_name": f"pit.contamination.{clock}",
                    "source_data": dataset,
                    "metric_config": continuous(
                        metric_id=f"pit-harness.contamination_delta.main_minus_{control}",
                        name=f"contamination delta (main minus {control})",
                        kind="return_difference",
                        unit="proportion",
                        description=(
                            f"Clock {clock}: the main arm's total return minus the {control} "
                            f"arm's ({'every date moved ten years' if control == 'shifted' else 'issuer identity removed'}). "
                            "What memory of the real filings adds, mixed with lost information "
                            "and distraction; it can be negative. Not a score to maximise: near "
                            "zero is what an agent without memory shows (lower_is_better is set "
                            "because a larger delta is more evidence of memory)."
                        ),
                        lower_is_better=True,
                        bounds=("-Infinity", "Infinity"),
                    ),
                    "score_details": {"score": value},
                }
            )
    return results


def _probe_results(body: dict[str, Any], dataset: dict[str, Any]) -> list[dict[str, Any]]:
    probe = body["probe"]
    verdict = probe.get("verdict")
    if verdict not in VERDICTS:
        return []  # the probe did not run (its status says why)
    details = text_details(
        {
            "status": probe["status"],
            "items": probe.get("total"),
            "date_recovered": probe.get("recovered"),
            "year_only": probe.get("year_only"),
            "issuer_recovered": probe.get("issuer_recovered"),
            "stride": probe.get("stride"),
        }
    )
    results = [
        {
            "evaluation_result_id": "pit.mask_probe.verdict",
            "evaluation_name": "pit.mask_probe",
            "source_data": dataset,
            "metric_config": {
                "evaluation_description": (
                    "The positive control on the shifted arm: the agent is asked the real "
                    "date and issuer of rows it was served; the score is the verdict's "
                    "index in level_names (mask_holds 0, mask_leaks 1, inconclusive 2, "
                    "no_items 3)."
                ),
                "metric_id": "pit-harness.mask_probe.verdict",
                "metric_name": "mask probe verdict",
                "metric_kind": "verdict",
                "lower_is_better": True,
                "score_type": "levels",
                "level_names": list(VERDICTS),
                "has_unknown_level": False,
            },
            "score_details": {"score": VERDICTS.index(verdict), "details": details},
        }
    ]
    total = probe.get("total") or 0
    if total:
        results.append(
            {
                "evaluation_result_id": "pit.mask_probe.date_recovered_share",
                "evaluation_name": "pit.mask_probe",
                "source_data": dataset,
                "metric_config": continuous(
                    metric_id="pit-harness.mask_probe.date_recovered_share",
                    name="probe items with the real date recovered",
                    kind="proportion",
                    unit="proportion",
                    description=(
                        "The share of the probe's items whose answer renders the real date in "
                        "full (a bare year is counted apart, as weaker evidence)."
                    ),
                    lower_is_better=True,
                    bounds=(0, 1),
                ),
                "score_details": {
                    "score": probe["recovered"] / total,
                    "details": details,
                    "uncertainty": {"num_samples": total},
                },
            }
        )
    return results


def run_record(body: dict[str, Any], *, source: Source, retrieved_at: datetime) -> dict[str, Any]:
    """The Every Eval Ever record of a verified run's body, validated."""
    config, binding = body["config"], body["binding"]
    p2 = body["protocol"]["P2_training_cutoffs"]
    dataset = _dataset(body)
    declared = config["model_version"] or None
    record = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"pit-harness/{declared or 'undeclared'}/{body['run_id']}",
        "retrieved_timestamp": epoch_seconds(retrieved_at),
        "source_metadata": source.metadata(
            text_details(
                {
                    "run_id": body["run_id"],
                    "verification": VERIFICATION.format(version=HARNESS_VERSION),
                    "bundle_content_digest": binding["bundle_content_digest"],
                    "config_sha256": binding["config_sha256"],
                    "trajectory_sha256": binding["trajectory_sha256"],
                    "capability_line": body["capability_line"],
                    "rankable": body["rankable"],
                    "not_rankable_because": body["not_rankable_because"],
                    "protocol_complete": body["protocol_complete"],
                    "protocol_gaps": body["protocol_gaps"],
                    "forward_binding": (config.get("forward") or {}).get("kind"),
                }
            )
        ),
        "eval_library": {
            "name": "pit-harness",
            "version": body["harness"]["version"],
            "additional_details": {"exported_by": f"pit-harness {HARNESS_VERSION}"},
        },
        "model_info": model_info(
            declared,
            text_details(
                {
                    "agent": config["agent"],
                    "agent_process": config["agent_process"],
                    "training_cutoff_declared": config["training_cutoff"] or "gap",
                    "training_cutoff_check": p2.get("check"),
                }
            ),
        ),
        "evaluation_results": [
            *_cell_results(body, dataset),
            *_delta_results(body, dataset),
            *_probe_results(body, dataset),
        ],
    }
    return validated(record)
