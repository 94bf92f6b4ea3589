"""``validate``, ``list``, ``render``, ``show``, ``commitment``: the point files themselves."""

from __future__ import annotations

import argparse
import sys

from harness.points.cli.args import points_of
from harness.points.markdown import Point, PointError, suite_sha256
from harness.points.seal import commitment, question_digest


def _one(args: argparse.Namespace) -> Point:
    found = {p.id: p for p in points_of(args)}
    if args.id not in found:
        raise PointError(f"unknown point {args.id!r} in {args.points_dir}")
    return found[args.id]


def cmd_validate(args: argparse.Namespace) -> int:
    points = points_of(args)
    print(f"Validated {len(points)} point(s) in {args.points_dir}")
    print(f"suite sha256 {suite_sha256(points)}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for point in points_of(args):
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


def cmd_commitment(args: argparse.Namespace) -> int:
    """Print the salted commitment a sealed set published over these points."""
    points = points_of(args)
    print(f"commitment {commitment(args.salt, points)}")
    print(f"questions  {question_digest(points)}  ({len(points)} point(s))")
    print(f"suite sha256 {suite_sha256(points)}")
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name, func, text in (
        ("validate", cmd_validate, "check every point; print the count and the suite digest"),
        ("list", cmd_list, "every point id, in path order"),
        ("render", cmd_render, "a point's Question only (what an agent sees)"),
        ("show", cmd_show, "a point's whole file, hidden sections included (for authors)"),
        ("commitment", cmd_commitment, "the salted commitment over the points' hidden "
         "sections, as a sealed set publishes it: recompute a revealed set's with its salt"),
    ):  # fmt: skip
        verb = verbs.add_parser(name, help=text, description=text)
        if name in ("render", "show"):
            verb.add_argument("id")
        if name == "commitment":
            verb.add_argument("--salt", required=True, help="the salt the reveal published (hex)")
        verb.add_argument("--points-dir", default="points", help="the points folder")
        verb.set_defaults(func=func)
