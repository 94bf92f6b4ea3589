"""``pit-harness snapshot verify``: a board snapshot's digest recomputed from its export."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import UsageError
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.snapshot import SnapshotError, verify_snapshot


def cmd_snapshot_verify(args: argparse.Namespace) -> int:
    """A board snapshot's digest recomputed from its JSON export (``harness.snapshot``)."""
    try:
        check = verify_snapshot(Path(args.file).read_text(encoding="utf-8"), args.digest)
    except SnapshotError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    print(f"snapshot digest {check.digest}")
    print(f"rows {check.rows}  removed after the snapshot {check.removed}")
    if check.ok is None:
        print("compare it with the digest the snapshot was published with (or pass --digest)")
        return EXIT_OK
    print("digest OK" if check.ok else f"digest MISMATCH  (published {args.digest})")
    return EXIT_OK if check.ok else EXIT_MISMATCH


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``snapshot verify``."""
    snap = sub.add_parser("snapshot", help="a board snapshot published by the site")
    snapsub = snap.add_subparsers(dest="snapshot_command", required=True)
    snapver = snapsub.add_parser(
        "verify",
        help="recompute a snapshot's digest offline from its JSON export (rows removed "
        "after publication count by the row digest they carry); exit 1 if it differs "
        "from --digest",
    )
    snapver.add_argument("file", help="the snapshot's JSON (/snapshots/<id>/?format=json)")
    snapver.add_argument("--digest", help="the content digest it was published with")
    snapver.set_defaults(func=cmd_snapshot_verify)
