"""``import``: a PITFALL judged-point artifact, checked against the points here."""

from __future__ import annotations

import argparse

from harness.points.artifacts import write_artifact
from harness.points.baseline import answers_from_baseline, import_baseline
from harness.points.cli.args import points_of


def cmd_import(args: argparse.Namespace) -> int:
    """Check a PITFALL judged-point artifact against the points here; print its figures;
    with ``--answers-out``, write its answers as one of our answer sets."""
    points = points_of(args)
    imported = import_baseline(args.file, points)
    figures = imported.summary()
    print(
        f"imported {len(imported.classes)} result(s): hashes verified against the point files, "
        "the summary against the results, each verdict against its judge's raw reply"
    )
    print(f"  agent {imported.agent}  judge {imported.judge}  status {imported.status}")
    ranked = "rankable" if imported.rankable else f"not rankable: {imported.not_rankable_because}"
    print(f"  judge {imported.judge_label} ({imported.judge_named}): {ranked}")
    print(
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  "
        f"HARNESS_ERROR {figures['harness_error']} (outside every denominator)"
    )
    if figures["accuracy"] is not None:
        low, high = figures["accuracy_interval_95"]
        print(
            f"  accuracy {figures['pass']}/{figures['judged']} = {figures['accuracy']:.4f}  "
            f"95% Wilson [{low:.4f}, {high:.4f}]"
        )
    for name, count in figures["class_counts"].items():
        print(f"  {name:<27} {count}")
    if args.answers_out:
        body = answers_from_baseline(args.file, points)
        sha = write_artifact(args.answers_out, body)
        print(f"its {len(body.answers)} answer(s) -> {args.answers_out} ({sha})")
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    text = (
        "check a complete PITFALL judged-point artifact against the points here, its summary "
        "and its judge's raw replies, and print its outcomes, accuracy with its interval and "
        "class counts (an unpinned judge: never rankable)"
    )
    verb = verbs.add_parser("import", help=text, description=text)
    verb.add_argument("file", help="a pitfall_point_baseline artifact (JSON)")
    verb.add_argument(
        "--answers-out",
        help="also write its answers as an answer set, to be judged again here",
    )
    verb.add_argument("--points-dir", default="points", help="the points folder")
    verb.set_defaults(func=cmd_import)
