"""``pit-harness audit-reasoning``: the reasoning audit of one run (``harness.receipt.audit``),
made offline from its trajectory and release, and, given the receipt, only once the
trajectory is the one the receipt binds."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli.common import UsageError
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.receipt.audit import audit_bytes, audit_digest, reasoning_audit, run_bundle
from harness.receipt.verify import verify


def cmd_audit_reasoning(args: argparse.Namespace) -> int:
    for option, path, folder in (
        ("--trajectory", args.trajectory, False),
        ("--bundle", args.bundle, True),
        ("--receipt", args.receipt, False),
    ):
        if path is not None and not (Path(path).is_dir() if folder else Path(path).is_file()):
            raise UsageError(f"{option} {path}: no such {'folder' if folder else 'file'}")
    if args.receipt is not None:
        # the receipt's hashes first: an audit of a trajectory it does not bind is no audit of its run
        report = verify(args.receipt, trajectory=args.trajectory, bundle=args.bundle)
        if not report.ok:
            for line in report.lines:
                print(line)
            print("audit REFUSED  the trajectory or the release is not the one the receipt binds")
            return EXIT_MISMATCH
        print("receipt ok  the trajectory and the release are the ones it binds")
    artifact = reasoning_audit(Path(args.trajectory), run_bundle(args.bundle, args.trajectory))
    digest = audit_digest(artifact)
    if args.out:
        Path(args.out).write_bytes(audit_bytes(artifact))
    if args.json:
        print(json.dumps({"digest": digest, "audit": artifact}, indent=2, sort_keys=True))
    else:
        print("\n".join(summary_lines(artifact, digest)))
        if args.out:
            print(f"written to {args.out}")
    return EXIT_OK


def summary_lines(artifact: dict[str, Any], digest: str) -> list[str]:
    """The audit in a terminal's words: a line per control cell, the totals, the digest."""
    lines = [f"reasoning audit of run {artifact.get('run_id')}"]
    for cell in artifact["cells"]:
        hits = cell["issuer_hits"] if cell["hides"] == "issuer" else cell["date_hits"]
        what = "issuer names" if cell["hides"] == "issuer" else "real dates"
        lines.append(
            f"  {cell['arm'] + '/' + cell['clock']:<16} {cell['texts']:>6} texts  "
            f"{cell['rows_served']:>7} rows  {hits:>5} {what}"
        )
    totals = artifact["totals"]
    lines.append(
        f"totals  {totals['texts']} texts scanned, {totals['date_hits']} real dates on shifted, "
        f"{totals['issuer_hits']} issuer names on redacted, {totals['cells_with_hits']} cells "
        "with findings"
    )
    lines.append(f"audit digest {digest}")
    lines.append(f"scope  {artifact['scope']}")
    return lines


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``audit-reasoning``."""
    audit = sub.add_parser(
        "audit-reasoning",
        help="scan the free text an agent wrote on the control arms (decision texts, probe "
        "answers, search queries, recorded model responses) for the real dates (shifted) and "
        "issuer names (redacted) of the rows it was served; prints per-cell counts and the "
        "audit's digest; exit 0 when it ran (findings are not errors), 1 when --receipt does "
        "not bind the trajectory or release",
    )
    audit.add_argument("--trajectory", required=True, help="the run's trajectory.jsonl")
    audit.add_argument("--bundle", required=True, help="the release folder the run used")
    audit.add_argument(
        "--receipt",
        help="the run's receipt: its hashes are checked against the trajectory and the "
        "release first, and a mismatch is refused (exit 1)",
    )
    audit.add_argument(
        "--out", help="write the audit here as canonical JSON (its sha256 is the digest)"
    )
    audit.add_argument(
        "--json", action="store_true", help="print the digest and the whole audit as JSON"
    )
    audit.set_defaults(func=cmd_audit_reasoning)
