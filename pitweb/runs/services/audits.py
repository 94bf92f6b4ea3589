"""A run's reasoning audit (``harness.receipt.audit``), stored: the artifact's canonical
bytes put into storage by their digest, and the run's ``ReasoningAudit`` row written,
replaced or removed as its verification ends (``verifying.verification_finish``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from harness.receipt.audit import audit_bytes, audit_digest
from pitweb.artifacts import store_bytes
from pitweb.runs.models import ReasoningAudit, Run

# what a page shows of each control cell (the excerpts stay in the artifact)
CELL_FIELDS = (
    "arm",
    "clock",
    "hides",
    "texts",
    "rows_served",
    "date_hits",
    "issuer_hits",
    "unscanned_responses",
)


@dataclass(frozen=True)
class StoredAudit:
    """An audit whose artifact is in storage: what its row is made of."""

    audit_version: int
    digest: str
    artifact_sha256: str
    artifact_name: str
    texts: int
    date_hits: int
    issuer_hits: int
    cells: list[dict[str, Any]]
    not_scanned: str


def reasoning_audit_store(*, artifact: dict[str, Any]) -> StoredAudit:
    """Put the artifact into storage as its canonical bytes, named by its digest (the same
    audit lands on the same name, once), and read back the stored file's sha256."""
    digest = audit_digest(artifact)
    name = f"audits/{digest.removeprefix('sha256:')}.json"
    totals = artifact["totals"]
    return StoredAudit(
        audit_version=int(artifact["audit_version"]),
        digest=digest,
        artifact_sha256=store_bytes(name, audit_bytes(artifact)),
        artifact_name=name,
        texts=int(totals["texts"]),
        date_hits=int(totals["date_hits"]),
        issuer_hits=int(totals["issuer_hits"]),
        cells=[{k: cell[k] for k in CELL_FIELDS} for cell in artifact["cells"]],
        not_scanned=str(artifact["not_scanned"]),
    )


def reasoning_audit_record(*, run: Run, stored: StoredAudit) -> ReasoningAudit:
    """The run's audit, as its verification just re-derived it (replacing the last)."""
    audit, _ = ReasoningAudit.objects.update_or_create(
        run=run,
        defaults={
            "audit_version": stored.audit_version,
            "digest": stored.digest,
            "artifact_sha256": stored.artifact_sha256,
            "artifact_name": stored.artifact_name,
            "texts": stored.texts,
            "date_hits": stored.date_hits,
            "issuer_hits": stored.issuer_hits,
            "cells": stored.cells,
            "not_scanned": stored.not_scanned,
            "created_at": timezone.now(),
        },
    )
    return audit


def reasoning_audit_remove(*, run: Run) -> None:
    """A refuted run keeps no audit: its trajectory proved nothing."""
    ReasoningAudit.objects.filter(run=run).delete()
