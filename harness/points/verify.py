"""Re-deriving answer and judged sets offline, against the point files.

Whoever holds the files can recompute a body's sha256, so a digest proves only that the
file is whole. What ``verify_answers`` and ``verify_judged`` prove is that every stated
figure is what the records give: the shapes are closed, every verdict and every control
is parsed back from the judge's raw reply, a harness error holds no verdict (and a
verdict that parses is not a harness error), the answers bind the point files, and the
summary, per-point records, controls and capability lines are recomputed. What they
cannot prove is that the raw replies are what the judge said: a judged set is the word
of whoever ran the judge.
"""

from __future__ import annotations

from typing import Any

from harness.points.answer import COMPLETED, HARNESS_ERROR
from harness.points.artifacts import (
    ANSWER_FIELDS,
    PointsArtifactError,
    answer_key,
    answer_summary,
    as_stored,
    canonical_sha256,
    capability_line,
    judge_capabilities,
    judged_figures,
    models_returned,
)
from harness.points.judge import (
    JudgeOutputError,
    agreement_figures,
    control_passed,
    parse_verdict,
    perturbed,
)
from harness.points.markdown import Point, suite_sha256
from harness.points.metrics import CLASSES, outcome

ANSWER_SET_KEYS = {"artifact_type", "schema_version", "status", "experiment", "point_count",
                   "samples_per_point", "point_ids", "point_suite_sha256", "answers",
                   "summary", "capabilities", "capability_line"}  # fmt: skip
ANSWER_KEYS = {"point_id", "sample", "point_sha256", "question_sha256", *ANSWER_FIELDS}
JUDGED_SET_KEYS = {"artifact_type", "schema_version", "answer_set_sha256", "experiment",
                   "judge", "controls", "verdicts", "points", "summary", "capabilities",
                   "capability_line"}  # fmt: skip
VERDICT_KEYS = {"point_id", "sample", "class", "decisive_reason", "outcome", "judge",
                "attempts", "latency_seconds", "judged_at", "raw", "error"}  # fmt: skip


def _closed(where: str, record: dict[str, Any], keys: set[str]) -> None:
    if set(record) != keys:
        extra, missing = sorted(set(record) - keys), sorted(keys - set(record))
        raise PointsArtifactError(f"{where}: unexpected keys {extra}, missing keys {missing}")


def _parses_to(where: str, raw: str, judged_class: str) -> str:
    try:
        parsed, reason = parse_verdict(raw)
    except JudgeOutputError as exc:
        raise PointsArtifactError(f"{where}: its raw judge reply does not parse: {exc}") from None
    if parsed != judged_class:
        raise PointsArtifactError(f"{where}: class {judged_class} differs from the raw reply")
    return reason


def _check_cost(answer: dict[str, Any], prices: dict[str, Any]) -> None:
    cost, tokens = answer["cost"], answer["tokens"]
    where = f"{answer['point_id']}#{answer['sample']}"
    if cost["source"] == "configured_prices":
        usd = (tokens["input"] * prices["input"] + tokens["output"] * prices["output"]) / 1e6
        if as_stored(round(usd, 6)) != cost["usd"]:
            raise PointsArtifactError(f"{where}: its cost is not its tokens at the set's prices")
    elif cost["source"] == "not_reported" and cost["usd"] is not None:
        raise PointsArtifactError(f"{where}: a cost stated as not reported")
    elif cost["source"] not in ("provider", "not_reported"):
        raise PointsArtifactError(f"{where}: unknown cost source {cost['source']!r}")


def _check_answer(answer: dict[str, Any], point: Point, prices: dict[str, Any]) -> None:
    where = f"{answer['point_id']}#{answer['sample']}"
    _closed(where, answer, ANSWER_KEYS)
    for key in ("point_sha256", "question_sha256"):
        if answer[key] != getattr(point, key):
            raise PointsArtifactError(f"point {point.id}: {key} differs from its file")
    if answer["status"] not in (COMPLETED, HARNESS_ERROR):
        raise PointsArtifactError(f"{where}: status is neither completed nor harness_error")
    if answer["status"] == HARNESS_ERROR and (answer["text"] or not answer["error"]):
        raise PointsArtifactError(f"{where}: a harness error holding an answer, or no reason")
    _check_cost(answer, prices)


def verify_answers(answers: dict[str, Any], points: list[Point]) -> list[Point]:
    """The points an answer set was run on, once its shape, its suite (ids and digest),
    every answer's point and question hashes, its grid of samples, its costs, status,
    summary and capability line hold against the point files here."""
    _closed("the answer set", answers, ANSWER_SET_KEYS)
    by_id = {p.id: p for p in points}
    ids = list(answers["point_ids"])
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise PointsArtifactError(f"the set was run on points not here: {', '.join(unknown)}")
    if len(ids) != answers["point_count"] or len(set(ids)) != len(ids):
        raise PointsArtifactError("point_ids and point_count disagree")
    suite = [by_id[i] for i in ids]
    if answers["point_suite_sha256"] != suite_sha256(suite):
        raise PointsArtifactError(
            "point_suite_sha256 differs from the point files here: the points changed, "
            "or the set was run on another suite"
        )
    samples = answers["samples_per_point"]
    keys = [answer_key(a) for a in answers["answers"]]
    if len(set(keys)) != len(keys):
        raise PointsArtifactError("a point's sample is answered twice")
    if set(keys) != {(i, n) for i in ids for n in range(samples)}:
        raise PointsArtifactError(f"not every point answered samples 0..{samples - 1}")
    prices = answers["experiment"].get("prices_usd_per_mtok") or {}
    for answer in answers["answers"]:
        _check_answer(answer, by_id[answer["point_id"]], prices)
    if answers["summary"] != as_stored(answer_summary(answers["answers"])):
        raise PointsArtifactError("the answer set's summary is not what its answers give")
    complete = answers["summary"]["harness_error"] == 0
    if answers["status"] != ("complete" if complete else "incomplete"):
        raise PointsArtifactError(f"the answer set says {answers['status']}; its answers disagree")
    stated = answers["capability_line"].split(" ")  # its order is the writer's; the file sorts keys
    if sorted(stated) != sorted(capability_line(answers["capabilities"]).split(" ")):
        raise PointsArtifactError("the answer set's capability line is not its capabilities")
    return suite


def _check_verdict(verdict: dict[str, Any], answer: dict[str, Any], judge: dict[str, Any]) -> None:
    where = f"{verdict['point_id']}#{verdict['sample']}"
    _closed(where, verdict, VERDICT_KEYS)
    stated = verdict["judge"]
    if (stated["model_configured"], stated["effort"]) != (judge["model"], judge["effort"]):
        raise PointsArtifactError(f"{where}: judged by another judge than the set's")
    if verdict["outcome"] != outcome(verdict["class"]):
        raise PointsArtifactError(f"{where}: outcome {verdict['outcome']} for its class")
    if verdict["class"] is not None:
        if answer["status"] != COMPLETED:
            raise PointsArtifactError(f"{where}: a verdict on an answer the agent never gave")
        if _parses_to(where, verdict["raw"], verdict["class"]) != verdict["decisive_reason"]:
            raise PointsArtifactError(f"{where}: decisive reason differs from the raw reply")
        return
    if answer["status"] != COMPLETED:  # nothing was sent to the judge
        if verdict["raw"] or not verdict["error"].startswith("no answer to judge"):
            raise PointsArtifactError(f"{where}: a judged reply for an answer never given")
        return
    if not verdict["error"]:
        raise PointsArtifactError(f"{where}: a judge harness error without its reason")
    try:
        parse_verdict(verdict["raw"])
    except JudgeOutputError:
        return
    raise PointsArtifactError(f"{where}: a verdict that parses is recorded as a harness error")


def _check_negative(record: dict[str, Any], point: Point) -> None:
    where = f"point {point.id}: negative control"
    kind = "numbers_perturbed" if perturbed(point.ground_truth) is not None else (
        "conclusion_negated"
    )  # fmt: skip
    if record["point_id"] != point.id or set(record["checks"]) != {"empty_answer", kind}:
        raise PointsArtifactError(f"{where}s are not the two this point gets")
    for name, check in record["checks"].items():
        _closed(f"{where} {name}", check, {"class", "raw", "error", "passed"})
        if check["class"] is not None:
            _parses_to(f"{where} {name}", check["raw"], check["class"])
        if check["passed"] != control_passed(name, check["class"]):
            raise PointsArtifactError(f"{where} {name}: passed contradicts its class")
    if record["flagged"] == all(c["passed"] for c in record["checks"].values()):
        raise PointsArtifactError(f"{where}: flagged contradicts its checks")


def _check_stability(steady: dict[str, Any], sampled: list[str]) -> None:
    ratings, errored = steady["ratings"], steady["items_with_harness_errors"]
    if steady["stride"] < 1 or steady["repeats"] < 2:
        raise PointsArtifactError("stability needs a stride >= 1 and at least two repeats")
    if sorted([*ratings, *errored]) != sorted(sampled[:: steady["stride"]]):
        raise PointsArtifactError("the stability sample is not every stride-th answered point")
    for point_id, classes in ratings.items():
        if len(classes) != steady["repeats"] or not set(classes) <= set(CLASSES):
            raise PointsArtifactError(f"stability {point_id}: not {steady['repeats']} verdicts")
    if any("HARNESS_ERROR" not in classes for classes in errored.values()):
        raise PointsArtifactError("a stability item set apart without a harness error")
    redone = {"items": len(ratings), **agreement_figures(list(ratings.values()))}
    if as_stored(redone) != {k: steady[k] for k in redone}:
        raise PointsArtifactError("the stability figures are not what its ratings give")


def _check_controls(
    controls: dict[str, Any], answered: list[Point], answers: dict[str, Any]
) -> None:
    _closed("controls", controls, {"positive", "negative", "stability"})
    positive = controls["positive"]
    if sorted(positive) != [p.id for p in answered]:
        raise PointsArtifactError("a positive control for every answered point, no other")
    for point in answered:
        record = positive[point.id]
        if record["class"] != "completely_correct":
            raise PointsArtifactError(f"point {point.id}: no passed positive control")
        _parses_to(f"point {point.id}: positive control", record["raw"], record["class"])
    negative = controls["negative"]
    if len(negative) != len(answered):
        raise PointsArtifactError("negative controls for every answered point, no other")
    for record, point in zip(negative, answered, strict=True):
        _check_negative(record, point)
    sampled = [
        p.id
        for p in answered
        if any(answer_key(a) == (p.id, 0) and a["status"] == COMPLETED for a in answers["answers"])
    ]
    _check_stability(controls["stability"], sampled)


def verify_judged(
    judged: dict[str, Any], answers: dict[str, Any], points: list[Point]
) -> dict[str, Any]:
    """Re-derive a judged set: bound to this answer set, which holds against the point
    files; one verdict per answer, each parsed back from the judge's raw reply, all from
    the set's one judge; every control re-derived; per-point records, summary and
    capability line equal to a fresh computation. Returns the summary."""
    _closed("the judged set", judged, JUDGED_SET_KEYS)
    if judged["answer_set_sha256"] != canonical_sha256(answers):
        raise PointsArtifactError("the judged set is bound to another answer set")
    answered = verify_answers(answers, points)
    by_key = {answer_key(a): a for a in answers["answers"]}
    keys = [answer_key(v) for v in judged["verdicts"]]
    if keys != sorted(by_key):
        raise PointsArtifactError("the verdicts are not one per answer, in order")
    _closed("judge", judged["judge"], {"model", "effort", "models_returned"})
    for verdict in judged["verdicts"]:
        _check_verdict(verdict, by_key[answer_key(verdict)], judged["judge"])
    if judged["judge"]["models_returned"] != models_returned(judged["verdicts"]):
        raise PointsArtifactError("the judge's returned models are not its verdicts'")
    _check_controls(judged["controls"], answered, answers)
    fields = judge_capabilities(answers, judged["judge"]["model"], judged["judge"]["effort"])
    if judged["capabilities"] != fields or judged["capability_line"] != capability_line(fields):
        raise PointsArtifactError("the capability line is not what the set's judge gives")
    if judged["experiment"] != answers["experiment"]:
        raise PointsArtifactError("the experiment differs from the answer set's")
    figures, per_point = judged_figures(
        answers, judged["verdicts"], judged["judge"], judged["capability_line"]
    )
    if as_stored(per_point) != judged["points"]:
        raise PointsArtifactError("the per-point records are not what the verdicts give")
    if as_stored(figures) != judged["summary"]:
        raise PointsArtifactError("the summary is not what the verdicts give")
    return dict(judged["summary"])
