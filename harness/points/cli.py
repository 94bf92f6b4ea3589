"""``pit-harness points``: validate, list, render and show judged points."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from harness.points.markdown import Point, PointError, load_points, suite_sha256
from harness.points.metrics import CLASSES


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


def cmd_commitment(args: argparse.Namespace) -> int:
    """Print the salted commitment a sealed set published over these points."""
    from harness.points.seal import commitment, question_digest

    points = _points(args)
    print(f"commitment {commitment(args.salt, points)}")
    print(f"questions  {question_digest(points)}  ({len(points)} point(s))")
    print(f"suite sha256 {suite_sha256(points)}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Check a PITFALL judged-point artifact against the points here; print its figures;
    with ``--answers-out``, write its answers as one of our answer sets."""
    from harness.points.baseline import answers_from_baseline, import_baseline

    points = _points(args)
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
        from harness.points.artifacts import write_artifact

        body = answers_from_baseline(args.file, points)
        sha = write_artifact(args.answers_out, body)
        print(f"its {len(body['answers'])} answer(s) -> {args.answers_out} ({sha})")
    return 0


def _count(least: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def _price(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a price") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a price is a finite amount >= 0, not {text}")
    return value


def _writable(path: str) -> None:
    """Refuse an output the command could not write, before any paid call is made."""
    import os
    from pathlib import Path

    folder = Path(path).resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise PointError(f"cannot write {path}: {folder} is not a writable folder")
    if Path(path).is_dir():
        raise PointError(f"cannot write {path}: it is a folder")


def _journal(args: argparse.Namespace, header: dict[str, Any]) -> Any:
    """The run's journal: paid calls saved as they finish, taken back with --resume."""
    from harness.points.journal import Journal, journal_path

    journal = Journal(journal_path(args.out), header, resume=args.resume)
    if journal.done:
        print(f"resuming: {len(journal.done)} finished call(s) taken from {journal.path}")
    return journal


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
NO_KEY = "no-key-on-loopback"  # the client needs a string; a loopback server may need none


def _credentials(args: argparse.Namespace) -> str:
    """The endpoint's key from the environment; on a loopback endpoint (the demo model, a
    model served on this machine) it may be unset."""
    import os
    from urllib.parse import urlsplit

    key = os.environ.get(args.api_key_env, "")
    if key:
        return key
    if urlsplit(args.base_url).hostname in LOOPBACK_HOSTS:
        return NO_KEY
    raise PointError(f"set {args.api_key_env} to the endpoint's API key (--api-key-env)")


def _selected(args: argparse.Namespace) -> list[Point]:
    points = _points(args)
    if not args.point_id:
        return points
    known = {p.id for p in points}
    unknown = sorted(set(args.point_id) - known)
    if unknown:
        raise PointError(f"unknown point(s) in {args.points_dir}: {', '.join(unknown)}")
    return [p for p in points if p.id in set(args.point_id)]


def cmd_answer(args: argparse.Namespace) -> int:
    """Answer every selected point (the Question only goes to the model); write the set.
    Exit 1 when an answer could not be had (it is recorded as a harness error)."""
    from harness.points.answer import AgentConfig, Answerer
    from harness.points.artifacts import write_artifact
    from harness.points.run import answer_points

    points = _selected(args)
    _writable(args.out)
    config = AgentConfig(
        base_url=args.base_url, api_key=_credentials(args), model=args.model,
        effort=args.effort, timeout=args.timeout,
        price_input_per_mtok=args.price_input_per_mtok,
        price_output_per_mtok=args.price_output_per_mtok,
        price_cached_input_per_mtok=args.price_cached_input_per_mtok,
    )  # fmt: skip
    header = {"kind": "answer", "base_url": args.base_url, "experiment": config.experiment(),
              "point_suite_sha256": suite_sha256(points), "samples": args.samples}  # fmt: skip
    journal = _journal(args, header)
    try:
        body = answer_points(
            Answerer(config), points, samples=args.samples, workers=args.workers, journal=journal
        )
        sha = write_artifact(args.out, body)
    finally:
        journal.close()
    if body["status"] == "complete":
        journal.finish()  # else kept: --resume asks only the failed calls again
    figures = body["summary"]
    cost = figures["cost_usd"]
    print(f"answered {len(points)} point(s) x {args.samples} -> {args.out} ({sha})")
    tokens = " ".join(f"{k} {v}" for k, v in figures["tokens"].items()) or "not reported"
    print(
        f"  {body['status']}: {figures['completed']} answer(s), {figures['harness_error']} "
        f"harness error(s)  tokens: {tokens}  cost "
        + (f"${cost:.4f}" if cost is not None else "not reported")
    )
    print(f"  {body['capability_line']}")
    if body["status"] != "complete":
        print("  the failed calls can be asked again: the same command with --resume")
        return 1
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    """Controls first, then every answer of an answer set, then the stability sample;
    the judged set is written only when the positive control held on every point."""
    from pathlib import Path

    from harness.points.artifacts import (
        ANSWER_SET,
        canonical_sha256,
        read_artifact,
        write_artifact,
    )
    from harness.points.judge import ControlFailed, Judge, JudgeConfig
    from harness.points.run import judge_answer_set
    from harness.points.verify import verify_answers

    answers = read_artifact(args.answers, ANSWER_SET)
    points = verify_answers(answers, _points(args))
    _writable(args.out)
    if Path(args.out).resolve() == Path(args.answers).resolve():
        raise PointError("--out is the answer set itself: the judged set is written beside it")
    header = {"kind": "judge", "base_url": args.base_url, "model": args.model,
              "effort": args.effort, "answer_set_sha256": canonical_sha256(answers),
              "stability_k": args.stability_k, "stride": args.stride}  # fmt: skip
    key = _credentials(args)
    journal = _journal(args, header)
    judge = Judge(
        JudgeConfig(
            base_url=args.base_url, api_key=key, model=args.model, effort=args.effort,
            timeout=args.timeout,
        ),
        journal=journal,
    )  # fmt: skip
    try:
        body = judge_answer_set(
            judge, answers, points, stability_k=args.stability_k, stride=args.stride,
            workers=args.workers,
        )  # fmt: skip
        sha = write_artifact(args.out, body)
    except ControlFailed as exc:
        print(
            f"pit-harness: {exc} (the verdicts so far are kept in {journal.path}; remove it "
            "to ask the judge again from the start)",
            file=sys.stderr,
        )
        return 1
    finally:
        journal.close()
    figures, steady = body["summary"], body["controls"]["stability"]
    print(f"judged {len(body['verdicts'])} answer(s) -> {args.out} ({sha})")
    usable, verdict = _reliability_lines(body["reliability"])
    if not usable:
        print("\n".join(verdict))
    line = (
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  HARNESS_ERROR "
        f"{figures['harness_error']}"
        if usable
        else f"  {len(body['verdicts'])} verdict(s), no figure of them shown  HARNESS_ERROR "
        f"{figures['harness_error']}"
    )
    if steady["items"]:
        line += f"  flip rate {steady['flip_rate']:.2f}  kappa {_kappa(steady['fleiss_kappa'])}"
    print(line)
    flagged = [n["point_id"] for n in body["controls"]["negative"] if n["flagged"]]
    if flagged:
        print(f"  negative controls flagged: {', '.join(flagged)}")
    if usable:
        print("\n".join(verdict))
    for unpinned in _unpinned_lines(body):
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


def _unpinned_lines(body: dict[str, Any]) -> list[str]:
    """A line saying the judge is not the seed's pinned one (none when it is), and, for
    the demo model, that its verdicts are a string rule."""
    from harness.points.demo import DEMO_MODEL
    from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL

    if body["capabilities"].get("judge_pinned"):
        return []
    judge = body["judge"]
    named = f"{judge['model']}/{judge['effort']}"
    returned = ", ".join(judge["models_returned"]) or "none"
    lines = [
        f"  judge unpinned ({named}, returned {returned}): not the seed's pinned judge "
        f"({DEFAULT_MODEL}/{DEFAULT_EFFORT}); these figures do not compare with a pinned "
        "judge's and are not for ranking"
    ]
    if DEMO_MODEL in (judge["model"], *judge["models_returned"]):
        lines.append(
            f"  DEMO: {DEMO_MODEL} is not a model; its verdicts are a fixed string rule, "
            "for trying the commands only"
        )
    return lines


def _kappa(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def _reliability_lines(reliability: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether the judge's controls make the set a result, and the lines that say so:
    the rules it broke, each named, or the rules it met."""
    from harness.points.gates import USABLE

    rules, found = reliability["rules"], reliability["figures"]
    if reliability["status"] == USABLE:
        kappa = found["fleiss_kappa"]
        return True, [
            f"  usable: the judge's controls held (negative controls failed on "
            f"{found['negative_controls_failed']} of {found['points']} point(s), at most "
            f"{rules['negative_control_failure_share_max']:.0%}; flip rate "
            f"{found['flip_rate']:.2f}, at most {rules['flip_rate_max']:.2f}; kappa "
            + (f"{kappa:.2f}, at least {rules['fleiss_kappa_min']:.2f})" if kappa is not None
               else "undefined (every rating one class): the flip rate decides)")
        ]  # fmt: skip
    return False, [
        "JUDGE UNRELIABLE: this judged set is not a result and nothing may rank it; it broke:",
        *(f"  - {rule}" for rule in reliability["broken"]),
    ]


def _figure_lines(figures: dict[str, Any]) -> list[str]:
    """A usable set's figures: its counts, accuracy and interval, the range over its
    harness errors, pass@k and the six classes."""
    errors = figures["harness_errors"]
    lines = [
        f"  PASS {figures['pass']}  FAIL {figures['fail']}  HARNESS_ERROR "
        f"{figures['harness_error']} (agent {errors['agent']}, judge {errors['judge']}; "
        "outside every denominator)"
    ]
    if figures["accuracy"] is not None:
        low, high = figures["accuracy_interval_95"]
        lines.append(
            f"  accuracy {figures['pass']}/{figures['judged']} = {figures['accuracy']:.4f}  "
            f"95% Wilson [{low:.4f}, {high:.4f}] (per answer"
            + ("" if figures["accuracy_interval_basis"].endswith("(one per point)") else
               "; too narrow with several samples per point: read pass@k")
            + ")"
        )  # fmt: skip
    if figures["harness_error"]:
        low, high = figures["accuracy_range_over_harness_errors"]
        lines.append(
            f"  were the {figures['harness_error']} harness error(s) resolved: accuracy "
            f"between {low:.4f} and {high:.4f}"
        )
    for k, value in figures["pass_at_k"].items():
        if value["value"] is not None:
            lines.append(f"  pass@{k} {value['value']:.4f} over {value['points']} point(s)")
    return lines + [f"  {name:<27} {figures['class_counts'][name]}" for name in CLASSES]


def _withheld_lines(figures: dict[str, Any]) -> list[str]:
    """What an unreliable set shows of its verdicts: how many there are and how many got
    none; no count, share or rate of its classes (a failed judge's figures are none)."""
    errors = figures["harness_errors"]
    return [
        f"  {figures['judged'] + figures['harness_error']} answer(s) judged by a judge that "
        f"failed its controls: no figure of its verdicts is shown; HARNESS_ERROR "
        f"{figures['harness_error']} (agent {errors['agent']}, judge {errors['judge']})"
    ]


def _judged_lines(
    figures: dict[str, Any], controls: dict[str, Any], usable: bool = True
) -> list[str]:
    lines = _figure_lines(figures) if usable else _withheld_lines(figures)
    flagged = [n["point_id"] for n in controls["negative"] if n["flagged"]]
    lines.append(
        f"  controls: positive passed on {len(controls['positive'])} point(s); negative "
        f"flagged on {', '.join(flagged) if flagged else 'none'}"
    )
    steady = controls["stability"]
    if steady["items"]:
        lines.append(
            f"  stability: {steady['items']} answer(s) x {steady['repeats']}: flip rate "
            f"{steady['flip_rate']:.2f}  raw agreement {steady['raw_agreement']:.2f}  "
            f"Fleiss kappa {_kappa(steady['fleiss_kappa'])}"
            + (
                f"  ({len(steady['items_with_harness_errors'])} set apart: judge errors)"
                if steady["items_with_harness_errors"]
                else ""
            )
        )
    return lines


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printable(line: str) -> str:
    """A line as a terminal should show it: control characters written as escapes, so
    text from a file cannot move the cursor over what was verified."""
    return CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode(), line)


def _suite_line(body: dict[str, Any], points: list[Point], folder: str) -> str:
    ran = body["point_count"]
    whole = "the whole suite" if ran == len(points) else "a PARTIAL suite"
    failed = body["summary"]["harness_error"]
    answers = f"answers {body['status']}" + (f": {failed} not given" if failed else "")
    return f"  suite: {ran} of the {len(points)} point(s) in {folder} ({whole}); {answers}"


def _verified_lines(args: argparse.Namespace, points: list[Point]) -> tuple[bool, list[str]]:
    from harness.points.artifacts import ANSWER_SET, PointsArtifactError, read_artifact
    from harness.points.verify import verify_answers, verify_judged

    body = read_artifact(args.file)
    if body["artifact_type"] == ANSWER_SET:
        verify_answers(body, points)
        return True, [
            f"Verified answer set {args.file}: {len(body['answers'])} answer(s)",
            _suite_line(body, points, args.points_dir),
            f"  {body['capability_line']}",
        ]
    if not args.answers:
        raise PointsArtifactError("a judged set is verified with its answer set: --answers")
    answers = read_artifact(args.answers, ANSWER_SET)
    figures = verify_judged(body, answers, points)
    usable, verdict = _reliability_lines(body["reliability"])
    head = f"Verified judged set {args.file}: {len(body['verdicts'])} verdict(s)"
    if not usable:
        head = f"NOT a result: judged set {args.file} verified, and its judge is unreliable"
    return usable, [
        head,
        *([] if usable else verdict),
        _suite_line(answers, points, args.points_dir),
        *_judged_lines(figures, body["controls"], usable),
        *(verdict if usable else []),
        f"  {body['capability_line']}",
        *_unpinned_lines(body),
    ]


def cmd_verify(args: argparse.Namespace) -> int:
    """Re-derive an answer set, or a judged set with its answer set, against the points;
    nothing is printed as verified until every check has held."""
    from harness.points.artifacts import PointsArtifactError

    points = _points(args)
    try:
        usable, lines = _verified_lines(args, points)
    except PointsArtifactError as exc:
        print(_printable(f"NOT verified: {exc}"))
        return 1
    except (
        KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError,
        ArithmeticError, MemoryError,
    ) as exc:  # fmt: skip
        print(_printable(f"NOT verified: {args.file}: malformed ({type(exc).__name__}: {exc})"))
        return 1
    print("\n".join(_printable(line) for line in lines))
    return 0 if usable else 1


def cmd_demo_model(args: argparse.Namespace) -> int:
    """Serve the demo model on loopback until stopped (Ctrl-C, or kill its process)."""
    import os
    from pathlib import Path

    from harness.points.demo import DEMO_MODEL, READERS, base_url, demo_server

    points = load_points(args.points) if args.points else None
    server = demo_server(args.port, points)
    url = base_url(server)
    if args.url_file:
        tmp = Path(f"{args.url_file}.tmp")
        tmp.write_text(url + "\n", encoding="utf-8")
        os.replace(tmp, args.url_file)  # whole or absent: a reader never sees half a URL
    # the line last: whoever reads it may read the file at once
    print(
        f"{DEMO_MODEL} at {url}: a demo, not a model (a fixed string rule plays the "
        "answering model and the judge); its judged sets say judge_pinned=False, and "
        "nothing should rank them"
        + (
            f"; the demo readers {', '.join(READERS)} answer the {len(points)} point(s) "
            f"of {args.points} by a fixed rule over their Ground Truth (not models either)"
            if points is not None
            else ""
        ),
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _endpoint(verb: argparse.ArgumentParser, model: str | None, effort: str | None) -> None:
    verb.add_argument("--points-dir", default="points", help="the points folder")
    verb.add_argument("--base-url", required=True, help="an OpenAI-compatible API base URL")
    verb.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="the variable holding the key (may be unset for a loopback endpoint)",
    )
    if model is None:
        verb.add_argument("--model", required=True, help="the model under test")
    else:
        verb.add_argument("--model", default=model, help="the judge (the seed pins this one)")
    verb.add_argument("--effort", default=effort, help="sent as reasoning_effort")
    verb.add_argument("--timeout", type=_seconds, default=600.0, help="seconds per call")
    verb.add_argument("--workers", type=_count(1), default=4, help="calls in flight at once")
    verb.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run from its journal (.OUT.journal.jsonl beside --out)",
    )


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
        ("commitment", cmd_commitment, "the salted commitment over the points' hidden "
         "sections, as a sealed set publishes it: recompute a revealed set's with its salt"),
        ("import", cmd_import, "check a complete PITFALL judged-point artifact against the "
         "points here, its summary and its judge's raw replies, and print its outcomes, "
         "accuracy with its interval and class counts (an unpinned judge: never rankable)"),
    ):  # fmt: skip
        verb = verbs.add_parser(name, help=text, description=text)
        if name in ("render", "show"):
            verb.add_argument("id")
        if name == "commitment":
            verb.add_argument("--salt", required=True, help="the salt the reveal published (hex)")
        if name == "import":
            verb.add_argument("file", help="a pitfall_point_baseline artifact (JSON)")
            verb.add_argument(
                "--answers-out",
                help="also write its answers as an answer set, to be judged again here",
            )
        verb.add_argument("--points-dir", default="points", help="the points folder")
        verb.set_defaults(func=func)

    from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL

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
    _endpoint(answer, model=None, effort=None)
    answer.add_argument("--samples", type=_count(1), default=1, help="answers per point (pass@k)")
    answer.add_argument("--point-id", action="append", help="only this point; repeatable")
    answer.add_argument("--price-input-per-mtok", type=_price, help="USD per million input tokens")
    answer.add_argument(
        "--price-output-per-mtok", type=_price, help="USD per million output tokens"
    )
    answer.add_argument(
        "--price-cached-input-per-mtok",
        type=_price,
        help="USD per million cached input tokens (default: the input price)",
    )
    answer.set_defaults(func=cmd_answer)
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
    _endpoint(judge, model=DEFAULT_MODEL, effort=DEFAULT_EFFORT)
    judge.add_argument(
        "--stability-k", type=_count(2), default=3, help="judgments per sampled answer"
    )
    judge.add_argument("--stride", type=_count(1), default=10, help="re-judge every Nth point")
    judge.set_defaults(func=cmd_judge)
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
    demo = verbs.add_parser(
        "demo-model",
        help="serve a demo model on 127.0.0.1 for trying answer and judge (not a model)",
        description="Serve an OpenAI-compatible chat-completions endpoint on 127.0.0.1 that "
        "answers only the model 'demo-judge-not-a-model': every question gets one fixed "
        "text, and a judge prompt a class by string comparison with the Ground Truth. No key, "
        "no network. Its judged sets say judge_pinned=False and describe that rule, not a "
        "model: never rank them. Serves until stopped.",
    )
    demo.add_argument("--port", type=_count(0), default=0, help="port (default: a free one)")
    demo.add_argument("--url-file", help="write the base URL here once it listens")
    demo.add_argument(
        "--points",
        help="a points folder: the demo readers (two answering models of different "
        "quality, not models either) answer its points by a fixed rule",
    )
    demo.set_defaults(func=cmd_demo_model)
