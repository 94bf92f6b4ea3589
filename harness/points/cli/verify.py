"""``verify``: an answer set, or a judged set with its answer set, re-derived offline."""

from __future__ import annotations

import argparse

from harness.points.artifacts import ANSWER_SET, PointsArtifactError, read_artifact, typed
from harness.points.cli.args import points_of
from harness.points.cli.report import (
    judged_lines,
    printable,
    reliability_lines,
    suite_line,
    unpinned_lines,
)
from harness.points.markdown import Point
from harness.points.model import AnswerSet, JudgedSet
from harness.points.verify import verify_answers, verify_judged


def _verified_lines(args: argparse.Namespace, points: list[Point]) -> tuple[bool, list[str]]:
    body = read_artifact(args.file)
    if body["artifact_type"] == ANSWER_SET:
        verify_answers(body, points)
        answer_set = typed(body, AnswerSet)
        return True, [
            f"Verified answer set {args.file}: {len(answer_set.answers)} answer(s)",
            suite_line(answer_set, points, args.points_dir),
            f"  {answer_set.capability_line}",
        ]
    if not args.answers:
        raise PointsArtifactError("a judged set is verified with its answer set: --answers")
    answers = read_artifact(args.answers, ANSWER_SET)
    figures = verify_judged(body, answers, points)
    judged = typed(body, JudgedSet)  # verified: what its type declares
    usable, verdict = reliability_lines(judged.reliability)
    head = f"Verified judged set {args.file}: {len(judged.verdicts)} verdict(s)"
    if not usable:
        head = f"NOT a result: judged set {args.file} verified, and its judge is unreliable"
    return usable, [
        head,
        *([] if usable else verdict),
        suite_line(typed(answers, AnswerSet), points, args.points_dir),
        *judged_lines(figures, judged.controls, usable),
        *(verdict if usable else []),
        f"  {judged.capability_line}",
        *unpinned_lines(judged),
    ]


def cmd_verify(args: argparse.Namespace) -> int:
    """Re-derive an answer set, or a judged set with its answer set, against the points;
    nothing is printed as verified until every check has held."""
    points = points_of(args)
    try:
        usable, lines = _verified_lines(args, points)
    except PointsArtifactError as exc:
        print(printable(f"NOT verified: {exc}"))
        return 1
    except (
        KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError,
        ArithmeticError, MemoryError,
    ) as exc:  # fmt: skip
        print(printable(f"NOT verified: {args.file}: malformed ({type(exc).__name__}: {exc})"))
        return 1
    print("\n".join(printable(line) for line in lines))
    return 0 if usable else 1


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    verify = verbs.add_parser(
        "verify",
        help="re-derive an answer set, or a judged set with its answer set, offline",
        description="Check an answer set against the point files, or a judged set against "
        "its answer set and the point files: the digests, one verdict per answer parsed "
        "back from the judge's raw reply, one judge, a passed positive control on every "
        "point, the controls' verdict on the judge, and every figure recomputed. Exit 0 "
        "verified and a result, 1 not verified or verified but judge_unreliable.",
    )
    verify.add_argument("file", help="an answer set or a judged set")
    verify.add_argument("--answers", help="the answer set a judged set binds")
    verify.add_argument("--points-dir", default="points", help="the points folder")
    verify.set_defaults(func=cmd_verify)
