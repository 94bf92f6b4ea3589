"""``answer``: every point answered by a model, written as an answer set."""

from __future__ import annotations

import argparse

from harness.points.answer import AgentConfig, Answerer
from harness.points.artifacts import suite_binding, write_artifact
from harness.points.cli.args import (
    credentials,
    endpoint_arguments,
    journal_for,
    points_of,
    price,
    whole_number,
    writable,
)
from harness.points.markdown import Point, PointError
from harness.points.questions import load_questions
from harness.points.run import answer_points
from harness.progress import terminal_bar


def _selected(args: argparse.Namespace) -> list[Point]:
    points = load_questions(args.questions) if args.questions else points_of(args)
    if not args.point_id:
        return points
    known = {p.id for p in points}
    unknown = sorted(set(args.point_id) - known)
    if unknown:
        where = args.questions or args.points_dir
        raise PointError(f"unknown point(s) in {where}: {', '.join(unknown)}")
    return [p for p in points if p.id in set(args.point_id)]


def cmd_answer(args: argparse.Namespace) -> int:
    """Answer every selected point (the Question only goes to the model); write the set.
    Exit 1 when an answer could not be had (it is recorded as a harness error)."""
    points = _selected(args)
    writable(args.out)
    config = AgentConfig(
        base_url=args.base_url, api_key=credentials(args), model=args.model,
        effort=args.effort, timeout=args.timeout,
        price_input_per_mtok=args.price_input_per_mtok,
        price_output_per_mtok=args.price_output_per_mtok,
        price_cached_input_per_mtok=args.price_cached_input_per_mtok,
    )  # fmt: skip
    header = {"kind": "answer", "base_url": args.base_url, "experiment": config.experiment(),
              "point_suite_sha256": suite_binding(points), "samples": args.samples}  # fmt: skip
    journal = journal_for(args, header)
    try:
        with terminal_bar("answer: points answered", unit="answers") as progress:
            body = answer_points(
                Answerer(config), points, samples=args.samples, workers=args.workers,
                journal=journal, progress=progress,
            )  # fmt: skip
        sha = write_artifact(args.out, body)
    finally:
        journal.close()
    if body.status == "complete":
        journal.finish()  # else kept: --resume asks only the failed calls again
    figures = body.summary
    cost = figures.cost_usd
    print(f"answered {len(points)} point(s) x {args.samples} -> {args.out} ({sha})")
    tokens = " ".join(f"{k} {v}" for k, v in figures.tokens.items()) or "not reported"
    print(
        f"  {body.status}: {figures.completed} answer(s), {figures.harness_error} "
        f"harness error(s)  tokens: {tokens}  cost "
        + (f"${cost:.4f}" if cost is not None else "not reported")
    )
    print(f"  {body.capability_line}")
    if body.status != "complete":
        print("  the failed calls can be asked again: the same command with --resume")
        return 1
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    answer = verbs.add_parser(
        "answer",
        help="answer every point with a model; write an answer set",
        description="Send each point's Question (never its Ground Truth or Provenance), "
        "with fixed instructions and no tools, to an OpenAI-compatible model, --samples "
        "times; record each answer's latency, tokens, cost and model id; write the answer "
        "set. A call that fails after three attempts is recorded as a harness error (never "
        "scored) and the command exits 1.",
    )
    answer.add_argument("--out", required=True, help="the answer set to write")
    endpoint_arguments(answer, model=None, effort=None)
    answer.add_argument(
        "--samples", type=whole_number(1), default=1, help="answers per point (pass@k)"
    )
    answer.add_argument("--point-id", action="append", help="only this point; repeatable")
    answer.add_argument(
        "--questions",
        metavar="FILE",
        help="answer a sealed set's published Questions (its questions.json, a "
        "pit_sealed_questions document) instead of --points-dir: the answer set binds "
        "the Questions alone, as a sealed set takes it before its reveal",
    )
    answer.add_argument("--price-input-per-mtok", type=price, help="USD per million input tokens")
    answer.add_argument("--price-output-per-mtok", type=price, help="USD per million output tokens")
    answer.add_argument(
        "--price-cached-input-per-mtok",
        type=price,
        help="USD per million cached input tokens (default: the input price)",
    )
    answer.set_defaults(func=cmd_answer)
