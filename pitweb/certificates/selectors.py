"""Reads of certificates: a run's, for its page."""

from __future__ import annotations

from typing import Any

from pitweb.certificates.models import Certificate
from pitweb.certificates.services import not_certifiable_because
from pitweb.runs.models import Run


def run_certificates(run: Run) -> dict[str, Any]:
    """What the run page says of certificates: why none is offered, or that one is, and
    every certificate signed about the run so far (newest first), each with its state."""
    signed = list(Certificate.objects.filter(run=run).order_by("-signed_at", "-id")[:50])
    live = [c for c in signed if c.revoked_at is None]
    return {
        "refused_because": not_certifiable_because(run),
        "signed": [
            {
                "certificate": c,
                "state": "revoked"
                if c.revoked_at is not None
                else ("current" if c is live[0] else "superseded by a later verdict"),
            }
            for c in signed
        ],
    }
