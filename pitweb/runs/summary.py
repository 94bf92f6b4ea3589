"""What the leaderboard shows of a receipt body, taken once at submission.

Derived data (recomputable from the body at any time), stored beside the run so a
board of ten thousand runs never parses ten thousand receipt bodies.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from msgspec import UnsetType

from harness.receipt.model import ReceiptBody
from harness.receipt.ratecard import run_usage
from harness.vocabulary import CLOCKS
from pitweb.runs.models import CUTOFF_CHECKS

T = TypeVar("T")
U = TypeVar("U")

# Where a receipt body's strings land in bounded columns: the column ("app.Model.field")
# and the schema leaves it is made of (as ``harness.receipt.schemas.leaf_paths`` names them). One
# leaf is stored as is; several are composed by ``run_facts``. A test holds each leaf's
# schema bound at or below its column's, so an upload too long for a column is refused by
# the schema (a 400 naming the field) before anything is written. A body string in no
# bounded column (an answer, the forms) is stored in a text or JSON column.
BODY_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs.Run.run_id": (".run_id",),
    # the registered release the body's digest names
    "runs.Run.release_digest": (".binding.bundle_content_digest",),
    "runs.Run.trajectory_sha256": (".binding.trajectory_sha256",),
    "runs.Run.agent": (".config.agent",),
    # a family is keyed by the run's agent and release digest
    "runs.Family.agent": (".config.agent",),
    "runs.Family.release_digest": (".binding.bundle_content_digest",),
    "runs.Run.model_version": (".config.model_version",),
    "runs.Run.training_cutoff": (".config.training_cutoff",),
    "runs.Run.mask_verdict": (".probe.verdict",),
    "runs.Run.error_cells": (".cells[].arm", ".cells[].clock", ".cells[].status", ".probe.status"),
}


def body_summary(receipt: ReceiptBody) -> dict[str, Any]:
    main = {c.clock: c.total_return for c in receipt.cells if c.arm == "main"}
    deltas = receipt.contamination
    probe = receipt.probe
    usage = run_usage([msgspec.to_builtins(c) for c in receipt.cells])
    return {
        # the run's model usage measured at the proxy, summed over its cells (absent for a
        # run that declared no model endpoints): priced with the site's rate card on read
        **({"model_usage": usage} if usage is not None else {}),
        **{f"main_{clock}": main.get(clock) for clock in CLOCKS},
        **{
            f"delta_shifted_{clock}": deltas[clock].main_minus_shifted if clock in deltas else None
            for clock in CLOCKS
        },
        **{
            f"delta_redacted_{clock}": deltas[clock].main_minus_redacted
            if clock in deltas
            else None
            for clock in CLOCKS
        },
        "mask_verdict": mask_verdict(probe),
        "probe_recovered": f"{_known(probe.recovered, 0)}/{_known(probe.total, 0)}",
        "protocol_gaps": ",".join(receipt.protocol_gaps),
    }


ERROR_STATUSES = ("agent_error", "harness_error", "incomplete")


def mask_verdict(probe: Any) -> str:
    """The probe's verdict; ``not_applicable`` for an agent whose dialect has no message
    for its question (sharpebench's), ``not_run`` when it did not run."""
    verdict: str | None = _known(probe.verdict, None)
    if verdict:
        return verdict
    return "not_applicable" if probe.status == "not_applicable" else "not_run"


def run_facts(receipt: ReceiptBody) -> dict[str, Any]:
    """What the board filters and sorts runs apart by, read off the body."""
    capabilities = receipt.capabilities
    errors = [f"{c.arm}/{c.clock} {c.status}" for c in receipt.cells if c.status in ERROR_STATUSES]
    if receipt.probe.status in ("harness_error", "incomplete"):
        errors.append(f"probe {receipt.probe.status}")
    return {
        "mask_verdict": mask_verdict(receipt.probe),
        "error_cells": ", ".join(errors),
        "agent_isolated": capabilities.agent_process == "isolated"
        and capabilities.network_isolated
        and capabilities.filesystem_confined,
    }


def cutoff_facts(receipt: ReceiptBody) -> dict[str, str]:
    """The agent's package digest, the declared training cutoff, and where the window
    lies against it (the receipt's P2 check as ``CutoffRelation``; empty when no cutoff
    is declared), read off the body."""
    check = _known(receipt.protocol.p2.check, None)
    return {
        "agent_digest": _known(receipt.config.agent_digest, ""),
        "training_cutoff": receipt.config.training_cutoff,
        "cutoff_relation": CUTOFF_CHECKS.get(check, "") if check else "",
    }


def _known(value: T | UnsetType, otherwise: U) -> T | U:
    """A field a body may leave out (``UNSET``), or ``otherwise``."""
    return otherwise if isinstance(value, UnsetType) else value
