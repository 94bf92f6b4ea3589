"""The site's signed list of revoked certificates.

A statement (``REVOCATIONS_TYPE``) whose one subject (``revocations``) is the digest of
the list it carries, ``predicate.revoked``: ``[{"certificate": "sha256:...", "revoked_at",
"reason"}]``, every certificate the site ever revoked (an entry is never removed), with
``signed_at``, the time the list was signed: a reader sees how fresh it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness import canonical
from harness.attest.keys import PublishedKey
from harness.attest.statement import (
    PREDICATE_BASE,
    StatementError,
    open_signed,
    subject,
    subject_digest,
)
from harness.attest.statement import make as make_statement

REVOCATIONS_TYPE = f"{PREDICATE_BASE}/revocations/v1"
SUBJECT = "revocations"


def revocations_statement(revoked: list[dict[str, Any]], signed_at: str) -> dict[str, Any]:
    return make_statement(
        [subject(SUBJECT, canonical.digest(revoked))],
        REVOCATIONS_TYPE,
        {"signed_at": signed_at, "revoked": revoked},
    )


@dataclass(frozen=True)
class Revocations:
    revoked: dict[str, dict[str, Any]]  # by certificate id
    signed_at: datetime


def verify_revocations(envelope: object, keys: dict[str, PublishedKey]) -> Revocations:
    """The list, if a published key signed it and its subject is the list it carries."""
    opened = open_signed(envelope, keys, REVOCATIONS_TYPE)
    revoked = opened.statement["predicate"].get("revoked")
    if not isinstance(revoked, list) or not all(
        isinstance(r, dict) and isinstance(r.get("certificate"), str) for r in revoked
    ):
        raise StatementError("statement", "the revocation list's entries are not readable")
    if subject_digest(opened.statement, SUBJECT) != canonical.digest(revoked):
        raise StatementError("statement", "the list is not the one its subject names")
    return Revocations({r["certificate"]: r for r in revoked}, opened.signed_at)
