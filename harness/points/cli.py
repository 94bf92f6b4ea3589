"""``pit-harness points``: validate, list, render and show judged points."""

from __future__ import annotations

import argparse
import sys

from harness.points.markdown import Point, PointError, load_points, suite_sha256


def _points(args: argparse.Namespace) -> list[Point]:
    return load_points(args.points_dir)


def _one(args: argparse.Namespace) -> Point:
    found = {p.id: p for p in _points(args)}
    if args.id not in found:
        raise PointError(f"unknown point {args.id!r} in {args.points_dir}")
    return found[args.id]


def cmd_validate(args: argparse.Namespace) -> int:
    points = _points(args)
    print(f"Validated {len(points)} point(s) in {args.points_dir}")
    print(f"suite sha256 {suite_sha256(points)}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for point in _points(args):
        print(point.id)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    """The Question only: what an agent sees. Never the Ground Truth or Provenance."""
    print(_one(args).agent_payload())
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """The whole file, hidden sections included: for authors and auditors."""
    sys.stdout.write(_one(args).text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Check a PITFALL judged-point artifact against the points here; print its figures."""
    from harness.points.baseline import import_baseline

    imported = import_baseline(args.file, _points(args))
    figures = imported.summary()
    print(f"imported {len(imported.classes)} result(s): hashes verified against the point files")
    print(f"  agent {imported.agent}  judge {imported.judge}  status {imported.status}")
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
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    points = sub.add_parser(
        "points",
        help="judged points: one Markdown file per point (PITFALL's format)",
        description="Point files: '# <id>', then exactly '## Question', '## Ground Truth' "
        "and '## Provenance', the last two inside <details> blocks. Exit 2 names the file "
        "and the rule a broken point breaks.",
    )
    verbs = points.add_subparsers(dest="points_command", required=True)
    for name, func, text in (
        ("validate", cmd_validate, "check every point; print the count and the suite digest"),
        ("list", cmd_list, "every point id, in path order"),
        ("render", cmd_render, "a point's Question only (what an agent sees)"),
        ("show", cmd_show, "a point's whole file, hidden sections included (for authors)"),
        ("import", cmd_import, "check a PITFALL judged-point artifact against the points "
         "here and print its outcomes, accuracy with its interval and class counts"),
    ):  # fmt: skip
        verb = verbs.add_parser(name, help=text, description=text)
        if name in ("render", "show"):
            verb.add_argument("id")
        if name == "import":
            verb.add_argument("file", help="a pitfall_point_baseline artifact (JSON)")
        verb.add_argument("--points-dir", default="points", help="the points folder")
        verb.set_defaults(func=func)
