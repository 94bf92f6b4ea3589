"""A published board snapshot's digest, recomputed offline from its JSON export.

A snapshot (version 2) is a JSON object: ``snapshot_version``, ``taken_at``,
``board_version``, ``filters`` and ``board``, the board's sections, each a list of rows.
Its digest covers each row's own digest, not the row itself, so a row can be taken out
of the snapshot (its run withdrawn or hidden after publication) and the snapshot still
verifies: the export shows such a row as ``{"removed_after_snapshot": true,
"row_digest": "sha256:..."}`` and nothing else of it.

    row digest       sha256 of the row's canonical JSON (``line``: keys sorted, compact,
                     UTF-8, floats in their shortest form)
    snapshot digest  sha256 of the canonical JSON of the snapshot with every row replaced
                     by its row digest (a removed row: the row digest it carries)

Pure functions: no Django; the site and ``pit-harness snapshot verify`` run the same.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from harness.canonical import line

SNAPSHOT_VERSION = 2
REMOVED = "removed_after_snapshot"


class SnapshotError(ValueError):
    """Not a snapshot export this harness can check."""


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def row_digest(row: dict[str, Any]) -> str:
    return _sha256(line(row))


def is_removed(row: dict[str, Any]) -> bool:
    return row.get(REMOVED) is True


def removed_row(digest: str) -> dict[str, Any]:
    """What a row taken out of a snapshot becomes: its digest, nothing of its run."""
    return {REMOVED: True, "row_digest": digest}


def _digest_of(row: Any) -> str:
    if not isinstance(row, dict):
        raise SnapshotError("a board row is not a JSON object")
    if is_removed(row):
        found = row.get("row_digest")
        if not isinstance(found, str) or not found.startswith("sha256:") or len(found) != 71:
            raise SnapshotError("a removed row carries no sha256 row digest")
        return found
    return row_digest(row)


def manifest(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot with every row replaced by its row digest: what its digest is over."""
    if snapshot.get("snapshot_version") != SNAPSHOT_VERSION:
        raise SnapshotError(
            f"snapshot_version {snapshot.get('snapshot_version')!r}: this harness checks "
            f"version {SNAPSHOT_VERSION}"
        )
    board = snapshot.get("board")
    if not isinstance(board, dict) or not all(isinstance(v, list) for v in board.values()):
        raise SnapshotError("the snapshot has no board of sections")
    return {
        **snapshot,
        "board": {name: [_digest_of(row) for row in rows] for name, rows in board.items()},
    }


def snapshot_digest(snapshot: dict[str, Any]) -> str:
    """The digest of a snapshot, whether its rows are present or removed."""
    return _sha256(line(manifest(snapshot)))


def redacted(snapshot: dict[str, Any], removed: set[int]) -> dict[str, Any]:
    """The snapshot with the rows of the submissions in ``removed`` taken out (their row
    digests kept): its digest is unchanged."""
    return {
        **snapshot,
        "board": {
            name: [
                removed_row(row_digest(row))
                if not is_removed(row) and row.get("submission") in removed
                else row
                for row in rows
            ]
            for name, rows in snapshot["board"].items()
        },
    }


@dataclass(frozen=True)
class Check:
    digest: str
    rows: int
    removed: int
    ok: bool | None  # None: no expected digest given


def verify_snapshot(text: str, expected: str | None = None) -> Check:
    """Recompute the digest of a snapshot's JSON export (``text``), and compare it with
    ``expected`` (the digest the snapshot was published with) when given."""
    try:
        snapshot = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"not JSON: {exc}") from None
    if not isinstance(snapshot, dict):
        raise SnapshotError("a snapshot is a JSON object")
    digest = snapshot_digest(snapshot)
    rows = [row for section in snapshot["board"].values() for row in section]
    return Check(
        digest=digest,
        rows=len(rows),
        removed=sum(is_removed(row) for row in rows),
        ok=None if expected is None else digest == expected,
    )
