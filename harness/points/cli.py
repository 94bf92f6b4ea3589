"""``pit-harness points``: validate, list, render and show judged points."""

from __future__ import annotations

import argparse
import sys
from typing import Any

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


def cmd_judge(args: argparse.Namespace) -> int:
    """Controls first, then every answer of an answer set, then the stability sample;
    the judged set is written only when the positive control held on every point."""
    import os

    from harness.points.artifacts import ANSWER_SET, judged_set, read_artifact, write_artifact
    from harness.points.judge import (
        ControlFailed,
        Judge,
        JudgeConfig,
        negative_controls,
        positive_control,
        stability,
    )

    answers = read_artifact(args.answers, ANSWER_SET)
    by_id = {p.id: p for p in _points(args)}
    answered = [by_id[a["point_id"]] for a in answers["answers"] if a["point_id"] in by_id]
    if len(answered) != len(answers["answers"]):
        raise PointError("the answer set names points that are not in --points-dir")
    key = os.environ.get(args.api_key_env, "")
    judge = Judge(
        JudgeConfig(base_url=args.base_url, api_key=key, model=args.model, effort=args.effort)
    )
    try:
        positive = {p.id: positive_control(judge, p).judged_class for p in answered}
    except ControlFailed as exc:
        print(f"pit-harness: {exc}", file=sys.stderr)
        return 1
    texts = {a["point_id"]: a["text"] for a in answers["answers"]}
    verdicts = {p.id: judge.judge(p.question, texts[p.id], p.ground_truth) for p in answered}
    controls: dict[str, Any] = {
        "positive": positive,
        "negative": [negative_controls(judge, p) for p in answered],
        "stability": stability(judge, answered, texts, k=args.stability_k, stride=args.stride),
    }
    from harness import canonical

    answers_sha = "sha256:" + canonical.sha256_hex(canonical.dumps_bytes(answers))
    body = judged_set(answers_sha, verdicts, controls)
    sha = write_artifact(args.out, body)
    figures = body["summary"]
    print(f"judged {len(verdicts)} answer(s) -> {args.out} ({sha})")
    print(
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  HARNESS_ERROR "
        f"{figures['harness_error']}  flip rate {controls['stability']['flip_rate']:.2f}  "
        f"kappa {controls['stability']['fleiss_kappa']:.2f}"
    )
    flagged = [n["point_id"] for n in controls["negative"] if n["flagged"]]
    if flagged:
        print(f"  negative controls flagged: {', '.join(flagged)}")
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
    judge = verbs.add_parser(
        "judge",
        help="judge an answer set: controls, verdicts, stability; write a judged set",
        description="Run the positive control on every answered point (exit 1, naming the "
        "point, if the judge does not call its own Ground Truth completely_correct), the "
        "negative controls, every answer, and a stability sample; write the judged set.",
    )
    judge.add_argument("answers", help="an answer set written by pit-harness")
    judge.add_argument("--out", required=True, help="the judged set to write")
    judge.add_argument("--points-dir", default="points")
    judge.add_argument("--base-url", required=True, help="an OpenAI-compatible API base URL")
    judge.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the key's variable")
    judge.add_argument("--model", default="gpt-5.6-sol")
    judge.add_argument("--effort", default="xhigh")
    judge.add_argument("--stability-k", type=int, default=3)
    judge.add_argument("--stride", type=int, default=10, help="re-judge every Nth point")
    judge.set_defaults(func=cmd_judge)
