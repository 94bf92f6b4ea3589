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
    ):
        verb = verbs.add_parser(name, help=text, description=text)
        if name in ("render", "show"):
            verb.add_argument("id")
        verb.add_argument("--points-dir", default="points", help="the points folder")
        verb.set_defaults(func=func)
