"""``pit-harness snapshot verify``: board snapshots checked offline: each digest
recomputed from its export, a chain of snapshots (oldest first) checked link by link, and
with ``--keys`` each snapshot's signature (``harness.attest.snapshots``)."""

from __future__ import annotations

import argparse
import json

from harness.attest.snapshots import split, verify_chain
from harness.cli.certificate import read_keys
from harness.cli.common import UsageError, read_json_document
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.snapshot import SnapshotError, verify_snapshot


def cmd_snapshot_verify(args: argparse.Namespace) -> int:
    """One snapshot's digest (compared with ``--digest``), or a chain; signatures with
    ``--keys``."""
    keys = read_keys(args.keys) if args.keys else None
    if len(args.file) == 1 and keys is None:
        return _one(args.file[0], args.digest)
    if args.digest:
        raise UsageError("--digest checks one snapshot; a chain is checked link by link")
    check = verify_chain([(path, read_json_document(path)) for path in args.file], keys)
    for line in check.lines:
        print(line)
    if not check.ok:
        print(f"chain BROKEN  ({len(check.failed)} problem(s))")
        return EXIT_MISMATCH
    print(f"chain ok  {len(check.digests)} snapshot(s), newest {check.digests[-1]}")
    return EXIT_OK


def _one(path: str, expected: str | None) -> int:
    try:
        snapshot, _signature = split(read_json_document(path))
        check = verify_snapshot(json.dumps(snapshot), expected)
    except SnapshotError as exc:
        raise UsageError(f"{path}: {exc}") from None
    print(f"snapshot digest {check.digest}")
    print(f"rows {check.rows}  removed after the snapshot {check.removed}")
    if check.ok is None:
        print("compare it with the digest the snapshot was published with (or pass --digest)")
        return EXIT_OK
    print("digest OK" if check.ok else f"digest MISMATCH  (published {expected})")
    return EXIT_OK if check.ok else EXIT_MISMATCH


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``snapshot verify``."""
    snap = sub.add_parser("snapshot", help="board snapshots published by the site")
    snapsub = snap.add_subparsers(dest="snapshot_command", required=True)
    snapver = snapsub.add_parser(
        "verify",
        help="recompute snapshots' digests offline from their JSON (rows removed after "
        "publication count by the row digest they carry); given several, oldest first, "
        "check that each names the one before it; with --keys, check each one's signature "
        "(the signed form, /snapshots/<id>/signed.json); exit 1 if a digest differs from "
        "--digest, a link or a signature does not hold, 2 if a file cannot be read",
    )
    snapver.add_argument(
        "file",
        nargs="+",
        help="a snapshot's JSON (/snapshots/<id>/?format=json) or its signed form; several "
        "make a chain, oldest first",
    )
    snapver.add_argument("--digest", help="the content digest one snapshot was published with")
    snapver.add_argument("--keys", help="the site's published keys (/.well-known/pitweb-keys.json)")
    snapver.set_defaults(func=cmd_snapshot_verify)
