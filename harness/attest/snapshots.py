"""Board snapshots, signed and chained.

Each snapshot the site publishes names the previous snapshot of the same board
(``previous_snapshot``: its digest, or null for a board's first) inside the bytes its
digest covers, and is signed: a statement (``SNAPSHOT_TYPE``) whose subject is the
snapshot's digest (``harness.snapshot``), with ``signed_at``, ``taken_at`` and the
previous digest again in its predicate. A signed snapshot as served::

    {"signed_snapshot_version": 1, "snapshot": {...}, "signature": <DSSE envelope>}

:func:`verify_chain` checks snapshots given oldest first: each digest recomputed (rows
removed after publication count by the digest they carry), each signature against the
published keys, and each snapshot naming the one before it, so an edited, dropped or
reordered snapshot breaks the chain where it happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.attest.keys import PublishedKey, stamp
from harness.attest.statement import (
    PREDICATE_BASE,
    StatementError,
    open_signed,
    subject,
    subject_digest,
)
from harness.attest.statement import make as make_statement
from harness.snapshot import SnapshotError, snapshot_digest

SNAPSHOT_TYPE = f"{PREDICATE_BASE}/board-snapshot/v1"
SUBJECT = "board-snapshot"
SIGNED_VERSION = 1
PREVIOUS = "previous_snapshot"


def snapshot_statement(snapshot: dict[str, Any], signed_at: str) -> dict[str, Any]:
    return make_statement(
        [subject(SUBJECT, snapshot_digest(snapshot))],
        SNAPSHOT_TYPE,
        {
            "signed_at": signed_at,
            "taken_at": snapshot.get("taken_at"),
            PREVIOUS: snapshot.get(PREVIOUS),
        },
    )


def signed_document(snapshot: dict[str, Any], envelope: dict[str, Any] | None) -> dict[str, Any]:
    return {"signed_snapshot_version": SIGNED_VERSION, "snapshot": snapshot, "signature": envelope}


@dataclass
class ChainCheck:
    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def bad(self, where: str, text: str) -> None:
        self.lines.append(f"{where} FAILED  {text}")
        self.failed.append(f"{where}: {text}")


def split(document: object) -> tuple[dict[str, Any], object]:
    """A snapshot and its signature (None: a bare snapshot export)."""
    if not isinstance(document, dict):
        raise SnapshotError("a snapshot is a JSON object")
    if "signed_snapshot_version" in document:
        if document.get("signed_snapshot_version") != SIGNED_VERSION:
            raise SnapshotError("not a signed snapshot this harness reads")
        snapshot = document.get("snapshot")
        if not isinstance(snapshot, dict):
            raise SnapshotError("the signed snapshot holds no snapshot")
        return snapshot, document.get("signature")
    return document, None


def verify_chain(
    documents: list[tuple[str, object]], keys: dict[str, PublishedKey] | None
) -> ChainCheck:
    """``documents``: (name, parsed JSON) oldest first. With ``keys``, every snapshot must
    carry a signature that holds; without, signatures are not checked (and it says so)."""
    check = ChainCheck()
    previous: str | None = None
    for n, (name, document) in enumerate(documents):
        try:
            snapshot, envelope = split(document)
            digest = snapshot_digest(snapshot)
        except SnapshotError as exc:
            check.bad(name, str(exc))
            return check
        check.digests.append(digest)
        line = f"{name} digest {digest}"
        if keys is not None:
            if envelope is None:
                check.bad(name, "no signature (fetch the signed snapshot: .../signed.json)")
                continue
            try:
                opened = open_signed(envelope, keys, SNAPSHOT_TYPE)
            except StatementError as exc:
                check.bad(name, f"signature: {exc}")
                continue
            if subject_digest(opened.statement, SUBJECT) != digest:
                check.bad(
                    name,
                    f"the signature is over {subject_digest(opened.statement, SUBJECT)}, "
                    f"the snapshot hashes to {digest} (the snapshot was edited)",
                )
                continue
            if opened.statement["predicate"].get(PREVIOUS) != snapshot.get(PREVIOUS):
                check.bad(name, "the signature and the snapshot name different predecessors")
                continue
            line += f"  signed {stamp(opened.signed_at)} by key {opened.key.keyid[:16]}"
        if n > 0:
            named = snapshot.get(PREVIOUS)
            if named != previous:
                check.bad(
                    name,
                    f"names {named} as the snapshot before it; the one before it in the chain "
                    f"hashes to {previous} (a snapshot was edited, dropped or put out of order)",
                )
                previous = digest
                continue
            line += "  follows the one before"
        elif snapshot.get(PREVIOUS) is None:
            line += "  the board's first snapshot"
        else:
            line += f"  (after {snapshot.get(PREVIOUS)}, not given)"
        check.lines.append(line)
        previous = digest
    if keys is None:
        check.lines.append("signatures NOT CHECKED  (pass --keys with the site's published keys)")
    return check
