"""What a certificate says about a run: read from what the site proved and stored, never
from what the submitter stated but did not prove (a stated figure is not in it)."""

from __future__ import annotations

from typing import Any

from harness import canonical
from harness.attest.certificate import certificate_statement
from pitweb.runs.models import Run

CERTIFICATE_VERSION = 1


def _platform(run: Run) -> dict[str, Any] | None:
    """The platform's figures with the release's reference prices, when scored."""
    score = run.platform
    if score is None or score.state != score.State.SCORED or not score.figures:
        return None
    figures = score.figures
    return {
        "reference_prices": {
            "version": score.prices.version,
            "file_sha256": score.prices.file_sha256,
            "source": score.prices.source,
        },
        "cells": {
            f"{c['arm']}/{c['clock']}": {
                "total_return": c.get("total_return"),
                "interval_95": c.get("interval_95"),
                "priced_trades": c.get("priced_trades"),
            }
            for c in figures.get("cells", [])
        },
        "contamination": figures.get("contamination", {}),
        "contamination_interval_95": figures.get("contamination_interval_95", {}),
        "method": figures.get("method", {}),
    }


def _audit(run: Run) -> dict[str, Any] | None:
    """The reasoning audit the worker re-derived, when there is one."""
    audit = getattr(run, "reasoning_audit", None)
    if audit is None:
        return None
    return {
        "digest": audit.digest,
        "texts": audit.texts,
        "date_hits": audit.date_hits,
        "issuer_hits": audit.issuer_hits,
    }


def _forward(run: Run) -> dict[str, Any]:
    binding = run.body.get("config", {}).get("forward")
    if binding is None:
        return {"status": "not_committed", "commitment": None}
    kind = binding["kind"]
    status = (
        "backtest"
        if kind == "backtest"
        else ("forward_tested" if run.forward_tested else f"{kind}_not_confirmed")
    )
    return {
        "status": status,
        "commitment": {"entry": binding["entry"], "seq": binding["seq"],
                       "stamped_at": binding["stamped_at"]},
    }  # fmt: skip


def run_predicate(run: Run) -> dict[str, Any]:
    """The predicate of ``run``'s certificate, without its time (``signed_at``)."""
    url = f"/runs/{run.body_sha256.removeprefix('sha256:')}/?submission={run.pk}"
    body = run.receipt
    probe = body.probe
    capabilities = run.body.get("capabilities", {})
    return {
        "certificate_version": CERTIFICATE_VERSION,
        "run": {"run_id": run.run_id, "submission": run.pk, "url": url},
        "release": {"name": body.release.name, "content_digest": run.release_digest},
        "benchmark": None if run.benchmark is None else run.benchmark.key,
        "verification": {"level": run.verification_level, "status": run.status},
        "receipt": {
            "valid": run.valid,
            "rankable": body.rankable,
            "protocol_complete": run.protocol_complete,
            "protocol_gaps": list(body.protocol_gaps),
        },
        "platform": _platform(run),
        "mask": {
            "verdict": run.mask_verdict,
            "recovered": probe.recovered if isinstance(probe.recovered, int) else None,
            "items": len(probe.items),
        },
        "reasoning_audit": _audit(run),
        "capabilities": {
            "source": "measured by the site's sandbox"
            if run.executed
            else "declared in the submitter's receipt",
            "line": body.capability_line,
            "agent_process": capabilities.get("agent_process"),
        },
        "forward": _forward(run),
    }


def statement_for(
    run: Run, predicate: dict[str, Any], signed_at: str, issue: int
) -> dict[str, Any]:
    """The statement signed: the predicate with its time and the certificate's number
    among the run's (so one signed again after a revocation is another statement)."""
    return certificate_statement(
        body_sha256=run.body_sha256,
        trajectory_sha256=run.trajectory_sha256,
        predicate={**predicate, "signed_at": signed_at, "issue": issue},
    )


def claims_digest(run: Run, predicate: dict[str, Any]) -> str:
    """What a certificate says but its time, as one digest."""
    return canonical.digest({"subjects": [run.body_sha256, run.trajectory_sha256],
                             "predicate": predicate})  # fmt: skip
