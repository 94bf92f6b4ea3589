"""``judge``: an answer set judged (controls, verdicts, stability), written as a judged set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.points.artifacts import (
    ANSWER_SET,
    canonical_sha256,
    read_artifact,
    typed,
    write_artifact,
)
from harness.points.cli.args import (
    credentials,
    endpoint_arguments,
    journal_for,
    points_of,
    whole_number,
    writable,
)
from harness.points.cli.report import kappa_text, reliability_lines, unpinned_lines
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL, ControlFailed, Judge, JudgeConfig
from harness.points.markdown import PointError
from harness.points.model import AnswerSet
from harness.points.run import judge_answer_set
from harness.points.verify import verify_answers
from harness.progress import terminal_bar


def cmd_judge(args: argparse.Namespace) -> int:
    """Controls first, then every answer of an answer set, then the stability sample;
    the judged set is written only when the positive control held on every point."""
    answers = read_artifact(args.answers, ANSWER_SET)
    points = verify_answers(answers, points_of(args))
    writable(args.out)
    if Path(args.out).resolve() == Path(args.answers).resolve():
        raise PointError("--out is the answer set itself: the judged set is written beside it")
    header = {"kind": "judge", "base_url": args.base_url, "model": args.model,
              "effort": args.effort, "answer_set_sha256": canonical_sha256(answers),
              "stability_k": args.stability_k, "stride": args.stride}  # fmt: skip
    key = credentials(args)
    journal = journal_for(args, header)
    judge = Judge(
        JudgeConfig(
            base_url=args.base_url, api_key=key, model=args.model, effort=args.effort,
            timeout=args.timeout,
        ),
        journal=journal,
    )  # fmt: skip
    try:
        with terminal_bar("judge: calls to the judge", unit="calls") as progress:
            body = judge_answer_set(
                judge, typed(answers, AnswerSet), points, stability_k=args.stability_k,
                stride=args.stride, workers=args.workers, progress=progress,
            )  # fmt: skip
        sha = write_artifact(args.out, body)
    except ControlFailed as exc:
        print(
            f"pit-harness: {exc} (the verdicts so far are kept in {journal.store}; remove it "
            "to ask the judge again from the start)",
            file=sys.stderr,
        )
        return 1
    finally:
        journal.close()
    figures, steady = body.summary, body.controls.stability
    print(f"judged {len(body.verdicts)} answer(s) -> {args.out} ({sha})")
    usable, verdict = reliability_lines(body.reliability)
    if not usable:
        print("\n".join(verdict))
    line = (
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  HARNESS_ERROR "
        f"{figures['harness_error']}"
        if usable
        else f"  {len(body.verdicts)} verdict(s), no figure of them shown  HARNESS_ERROR "
        f"{figures['harness_error']}"
    )
    if steady.items:
        line += f"  flip rate {steady.flip_rate:.2f}  kappa {kappa_text(steady.fleiss_kappa)}"
    print(line)
    flagged = [n.point_id for n in body.controls.negative if n.flagged]
    if flagged:
        print(f"  negative controls flagged: {', '.join(flagged)}")
    if usable:
        print("\n".join(verdict))
    for unpinned in unpinned_lines(body):
        print(unpinned)
    judge_errors = figures["harness_errors"]["judge"]
    if judge_errors:
        print(
            f"  {judge_errors} answer(s) got no usable verdict (harness errors, not scored); "
            "the same command with --resume asks only those again"
        )
        return 1
    journal.finish()
    return 0 if usable else 1


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    judge = verbs.add_parser(
        "judge",
        help="judge an answer set: controls, verdicts, stability; write a judged set",
        description="Run the positive control on every answered point (exit 1, naming the "
        "point, if the judge does not call its own Ground Truth completely_correct), the "
        "negative controls (an empty answer, a wrong one, a wrong one telling the judge to "
        "pass it), every answer, and a stability sample; write the judged set. The set is "
        "a result only if the judge's controls held: negative controls failed on at most 2% "
        "of points, flip rate at most 0.15, Fleiss' kappa at least 0.6 where defined; "
        "otherwise it is judge_unreliable, the rules it broke are printed above its "
        "figures and the command exits 1.",
    )
    judge.add_argument("answers", help="an answer set written by pit-harness")
    judge.add_argument("--out", required=True, help="the judged set to write")
    endpoint_arguments(judge, model=DEFAULT_MODEL, effort=DEFAULT_EFFORT)
    judge.add_argument(
        "--stability-k", type=whole_number(2), default=3, help="judgments per sampled answer"
    )
    judge.add_argument(
        "--stride", type=whole_number(1), default=10, help="re-judge every Nth point"
    )
    judge.set_defaults(func=cmd_judge)
