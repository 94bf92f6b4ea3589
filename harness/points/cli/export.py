"""``export``: a verified judged set as an Every Eval Ever record or an Inspect eval log."""

from __future__ import annotations

import argparse

from harness.interchange.every_eval_ever import SCHEMA_VERSION, InterchangeError, write_record
from harness.interchange.inspect_log import write_inspect_log
from harness.interchange.judged import verified_judged
from harness.interchange.options import now, source_arguments, source_of
from harness.interchange.points_record import points_record
from harness.points.cli.args import points_of
from harness.points.cli.report import printable


def cmd_export(args: argparse.Namespace) -> int:
    points = points_of(args)
    try:
        judged = verified_judged(args.file, points, answers=args.answers)
        if args.format == "eee":
            write_record(
                args.out, points_record(judged, source=source_of(args), retrieved_at=now())
            )
            written, kind = args.out, f"Every Eval Ever {SCHEMA_VERSION} record, validated"
        else:
            written, kind = str(write_inspect_log(judged, args.out)), "Inspect eval log"
    except InterchangeError as exc:
        print(printable(f"NOT exported: {exc}"))
        return 1
    print(
        f"judged set verified ({judged.kind}, {len(judged.answers)} answer(s)) -> {written} ({kind})"
    )
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    text = (
        "verify a judged set (ours with its answer set, or PITFALL's artifact) against the "
        "point files, then write it as an Every Eval Ever 0.3.0 record (--format eee: "
        "accuracy with its Wilson interval, each class's share, pass@k; validated against "
        "the vendored schema first) or an Inspect eval log (--format inspect: one sample "
        "per answer with its verdict and class; the Ground Truth is never exported). Exit 1, "
        "nothing written, for a set that does not verify or whose judge is unreliable"
    )
    verb = verbs.add_parser("export", help=text, description=text)
    verb.add_argument("file", help="a judged set (pit_judged_set) or a PITFALL artifact")
    verb.add_argument("--answers", help="the answer set a judged set of ours binds")
    verb.add_argument("--points-dir", default="points", help="the points folder")
    verb.add_argument("--format", required=True, choices=["eee", "inspect"])
    verb.add_argument(
        "--out",
        required=True,
        help="eee: the record (JSON) to write; inspect: the log folder (made if missing), "
        "where the log is written under the name Inspect gives its logs "
        "(<time>_pitfall-points_<id>.json)",
    )
    source_arguments(verb)
    verb.set_defaults(func=cmd_export)
