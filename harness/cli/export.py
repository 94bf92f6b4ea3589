"""``pit-harness export``: decision points as JSONL for other eval tools."""

from __future__ import annotations

import argparse

from harness.outcomes import EXIT_OK
from harness.release.bundle import Bundle
from harness.runs.export import export_points
from harness.vocabulary import ARMS, CLOCKS


def cmd_export(args: argparse.Namespace) -> int:
    bundle = Bundle.load(args.bundle, forms=args.forms, start=args.start, end=args.end)
    count = export_points(
        bundle, arm=args.arm, clock=args.clock, out=args.out, hold_sessions=args.hold_sessions
    )
    print(f"{count} decision points written to {args.out}")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``export``."""
    exp = sub.add_parser(
        "export",
        help="decision points as JSONL for Inspect's json_dataset(), promptfoo's "
        "file://samples.jsonl and an lm-eval task (scalar metadata; target empty, "
        "metadata.scorer names the scorer: knowable_picks)",
    )
    exp.add_argument("--bundle", required=True)
    exp.add_argument("--arm", required=True, choices=ARMS)
    exp.add_argument("--clock", required=True, choices=CLOCKS)
    exp.add_argument("--out", required=True)
    exp.add_argument("--forms", nargs="+")
    exp.add_argument("--start")
    exp.add_argument("--end")
    exp.add_argument("--hold-sessions", type=int, default=5)
    exp.set_defaults(func=cmd_export)
