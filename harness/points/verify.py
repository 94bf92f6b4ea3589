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

import math
import re
from typing import Any

from harness.points import model
from harness.points.answer import COMPLETED, HARNESS_ERROR, priced
from harness.points.artifacts import (
    JUDGED_SET_VERSION,
    PointsArtifactError,
    answer_key,
    answer_summary,
    as_stored,
    canonical_sha256,
    capability_line,
    judge_capabilities,
    judged_figures,
    models_returned,
    suite_binding,
)
from harness.points.gates import assess
from harness.points.judge import (
    EMPTY,
    INJECTED,
    JudgeOutputError,
    agreement_figures,
    control_passed,
    parse_verdict,
    wrong_answer,
)
from harness.points.markdown import Point
from harness.points.metrics import outcome
from harness.points.seal import question_digest

# the keys of each closed record, as its type declares them
ANSWER_SET_KEYS = model.keys(model.AnswerSet)
ANSWER_KEYS = model.keys(model.Answer)
JUDGED_SET_KEYS = model.keys(model.JudgedSet)
STABILITY_KEYS = model.keys(model.Stability)
CONTROLS_KEYS = model.keys(model.Controls)
JUDGE_KEYS = model.keys(model.Judge)
NEGATIVE_KEYS = model.keys(model.NegativeControl)
CHECK_KEYS = model.keys(model.ControlCheck)
VERDICT_KEYS = model.keys(model.VerdictRecord)
CAPABILITY_VALUES: dict[str, tuple[Any, ...]] = {
    "ground_truth_visible_to_agent": (False, True, "unknown"),
    "provenance_visible_to_agent": (False, True, "unknown"),
    "training_cutoff_checked": (False, True),
    "evidence_frozen": (False, True, "unknown"),
}
TOOLS = re.compile(r"none|[a-z_]+(\([a-z-]+\))?(,[a-z_]+(\([a-z-]+\))?)*")
LIMIT = 10**12  # no count or sample in a set comes near this


def _closed(where: str, record: dict[str, Any], keys: frozenset[str]) -> None:
    if set(record) != keys:
        extra, missing = sorted(set(record) - keys), sorted(keys - set(record))
        raise PointsArtifactError(f"{where}: unexpected keys {extra}, missing keys {missing}")


def _whole(value: Any, least: int = 0) -> bool:
    return type(value) is int and least <= value < LIMIT


def _amount(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value < LIMIT


def _check_capabilities(answers: dict[str, Any]) -> None:
    fields = answers["capabilities"]
    for key, value in fields.items():
        allowed = CAPABILITY_VALUES.get(key)
        if key == "tools_offered":
            if not isinstance(value, str) or not TOOLS.fullmatch(value):
                raise PointsArtifactError(f"capability tools_offered={value!r} is not a tool list")
        elif allowed is None or not any(type(value) is type(v) and value == v for v in allowed):
            raise PointsArtifactError(f"capability {key}={value!r} is not one we record")
    if "ground_truth_visible_to_agent" not in fields or "tools_offered" not in fields:
        raise PointsArtifactError(
            "capabilities must say whether the agent saw the Ground Truth and its tools"
        )
    if fields["tools_offered"] == "none" and answers["summary"]["tool_calls"]:
        raise PointsArtifactError("tools_offered=none, yet its answers record tool calls")
    stated = answers["capability_line"].split(" ")  # the writer's order; the file sorts keys
    if sorted(stated) != sorted(capability_line(fields).split(" ")):
        raise PointsArtifactError("the answer set's capability line is not its capabilities")


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
        if as_stored(priced(tokens, prices)) != cost["usd"]:
            raise PointsArtifactError(f"{where}: its cost is not its tokens at the set's prices")
    elif cost["source"] == "not_reported" and cost["usd"] is not None:
        raise PointsArtifactError(f"{where}: a cost stated as not reported")
    elif cost["source"] not in ("provider", "not_reported"):
        raise PointsArtifactError(f"{where}: unknown cost source {cost['source']!r}")


def _check_answer(
    answer: dict[str, Any], point: Point, prices: dict[str, Any], *, by_questions: bool
) -> None:
    where = f"{answer['point_id']}#{answer['sample']}"
    _closed(where, answer, ANSWER_KEYS)
    if answer["question_sha256"] != point.question_sha256:
        raise PointsArtifactError(f"point {point.id}: question_sha256 differs from its file")
    bound = "" if by_questions else point.point_sha256
    if answer["point_sha256"] != bound:
        raise PointsArtifactError(
            f"point {point.id}: point_sha256 differs from its file"
            if not by_questions
            else f"point {point.id}: an answer bound by Questions states a point_sha256"
        )
    if answer["status"] not in (COMPLETED, HARNESS_ERROR):
        raise PointsArtifactError(f"{where}: status is neither completed nor harness_error")
    if answer["status"] == HARNESS_ERROR and (answer["text"] or not answer["error"]):
        raise PointsArtifactError(f"{where}: a harness error holding an answer, or no reason")
    if not isinstance(answer["text"], str):
        raise PointsArtifactError(f"{where}: its text is not text")
    counts = [*answer["tokens"].values(), *answer["tool_counts"].values()]
    if not all(_whole(v) for v in counts):
        raise PointsArtifactError(f"{where}: a token or tool count that is not a whole number")
    if answer["latency_seconds"] is not None and not _amount(answer["latency_seconds"]):
        raise PointsArtifactError(f"{where}: its latency is not a duration")
    if answer["cost"]["usd"] is not None and not _amount(answer["cost"]["usd"]):
        raise PointsArtifactError(f"{where}: its cost is not an amount")
    _check_cost(answer, prices)


def verify_answers(answers: dict[str, Any], points: list[Point]) -> list[Point]:
    """The points an answer set was run on, once its shape, its suite (ids and digest),
    every answer's point and question hashes, its grid of samples, its costs, status,
    summary and capability line hold against the point files here. A set answered from a
    sealed set's published Questions binds those alone (``harness.points.questions``) and
    is checked by them: nothing here then reads a hidden section."""
    _closed("the answer set", answers, ANSWER_SET_KEYS)
    by_id = {p.id: p for p in points}
    ids = list(answers["point_ids"])
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise PointsArtifactError(f"the set was run on points not here: {', '.join(unknown)}")
    if len(ids) != answers["point_count"] or len(set(ids)) != len(ids):
        raise PointsArtifactError("point_ids and point_count disagree")
    suite = [by_id[i] for i in ids]
    # answers made before a reveal bind the Questions they were shown, nothing more
    # (harness.points.questions); any other set binds the whole files
    by_questions = answers["point_suite_sha256"] == question_digest(suite)
    if not by_questions and answers["point_suite_sha256"] != suite_binding(suite):
        raise PointsArtifactError(
            "point_suite_sha256 differs from the point files here: the points changed, "
            "or the set was run on another suite"
        )
    samples = answers["samples_per_point"]
    if not _whole(samples, least=1) or samples * len(ids) != len(answers["answers"]):
        raise PointsArtifactError(f"not every point answered samples_per_point={samples!r} times")
    keys = [answer_key(a) for a in answers["answers"]]
    if len(set(keys)) != len(keys):
        raise PointsArtifactError("a point's sample is answered twice")
    if set(keys) != {(i, n) for i in ids for n in range(samples)}:
        raise PointsArtifactError(f"not every point answered samples 0..{samples - 1}")
    prices = answers["experiment"].get("prices_usd_per_mtok") or {}
    for answer in answers["answers"]:
        _check_answer(answer, by_id[answer["point_id"]], prices, by_questions=by_questions)
    if answers["summary"] != as_stored(answer_summary(answers["answers"])):
        raise PointsArtifactError("the answer set's summary is not what its answers give")
    complete = answers["summary"]["harness_error"] == 0
    if answers["status"] != ("complete" if complete else "incomplete"):
        raise PointsArtifactError(f"the answer set says {answers['status']}; its answers disagree")
    _check_capabilities(answers)
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
    kind, _ = wrong_answer(point)
    if record["point_id"] != point.id or set(record["checks"]) != {EMPTY, kind, INJECTED}:
        raise PointsArtifactError(f"{where}s are not the three this point gets")
    for name, check in record["checks"].items():
        _closed(f"{where} {name}", check, CHECK_KEYS)
        if check["class"] is not None:
            _parses_to(f"{where} {name}", check["raw"], check["class"])
        if check["passed"] is not control_passed(name, check["class"]):
            raise PointsArtifactError(f"{where} {name}: passed contradicts its class")
        if check["class"] is None and not _is_harness_error(check["raw"]):
            raise PointsArtifactError(f"{where} {name}: a verdict hidden as an error")
    _closed(where, record, NEGATIVE_KEYS)
    if record["flagged"] is not (not all(c["passed"] for c in record["checks"].values())):
        raise PointsArtifactError(f"{where}: flagged contradicts its checks")


def _is_harness_error(raw: str) -> bool:
    try:
        parse_verdict(raw)
    except JudgeOutputError:
        return True
    return False


def _check_stability(steady: dict[str, Any], sampled: list[str]) -> None:
    _closed("stability", steady, STABILITY_KEYS)
    ratings, errored, replies = (
        steady["ratings"], steady["items_with_harness_errors"], steady["replies"]
    )  # fmt: skip
    if not _whole(steady["stride"], least=1) or not _whole(steady["repeats"], least=2):
        raise PointsArtifactError("stability needs a stride >= 1 and at least two repeats")
    if sorted([*ratings, *errored]) != sorted(sampled[:: steady["stride"]]):
        raise PointsArtifactError("the stability sample is not every stride-th answered point")
    if set(ratings) & set(errored) or sorted(replies) != sorted([*ratings, *errored]):
        raise PointsArtifactError("stability: every sampled item once, with its replies")
    for point_id, classes in [*ratings.items(), *errored.items()]:
        raws = replies[point_id]
        if len(classes) != steady["repeats"] or len(raws) != steady["repeats"]:
            raise PointsArtifactError(f"stability {point_id}: not {steady['repeats']} verdicts")
        for judged_class, raw in zip(classes, raws, strict=True):
            if judged_class == "HARNESS_ERROR":
                if not _is_harness_error(raw):
                    raise PointsArtifactError(f"stability {point_id}: a verdict hidden as an error")
            else:
                _parses_to(f"stability {point_id}", raw, judged_class)
        if (point_id in errored) != ("HARNESS_ERROR" in classes):
            raise PointsArtifactError(f"stability {point_id}: set apart without cause, or kept")
    redone = {"items": len(ratings), **agreement_figures(list(ratings.values()))}
    if as_stored(redone) != {k: steady[k] for k in redone}:
        raise PointsArtifactError("the stability figures are not what its ratings give")


def _check_controls(
    controls: dict[str, Any], answered: list[Point], answers: dict[str, Any]
) -> None:
    _closed("controls", controls, CONTROLS_KEYS)
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
    first = {
        a["point_id"] for a in answers["answers"] if a["sample"] == 0 and a["status"] == COMPLETED
    }  # each point's first answer, where it was given: what the stability check re-judged
    sampled = [p.id for p in answered if p.id in first]
    _check_stability(controls["stability"], sampled)


def verify_judged(
    judged: dict[str, Any], answers: dict[str, Any], points: list[Point]
) -> dict[str, Any]:
    """Re-derive a judged set: bound to this answer set, which holds against the point
    files; one verdict per answer, each parsed back from the judge's raw reply, all from
    the set's one judge; every control re-derived; per-point records, summary and
    capability line equal to a fresh computation. Returns the summary."""
    if judged.get("schema_version") != JUDGED_SET_VERSION:
        raise PointsArtifactError(
            f"judged set schema_version {judged.get('schema_version')!r}: this harness reads "
            f"{JUDGED_SET_VERSION} (an older set lacks the injection control and the "
            "reliability gates: judge its answer set again)"
        )
    _closed("the judged set", judged, JUDGED_SET_KEYS)
    if judged["answer_set_sha256"] != canonical_sha256(answers):
        raise PointsArtifactError("the judged set is bound to another answer set")
    answered = verify_answers(answers, points)
    by_key = {answer_key(a): a for a in answers["answers"]}
    keys = [answer_key(v) for v in judged["verdicts"]]
    if keys != sorted(by_key):
        raise PointsArtifactError("the verdicts are not one per answer, in order")
    _closed("judge", judged["judge"], JUDGE_KEYS)
    for verdict in judged["verdicts"]:
        _check_verdict(verdict, by_key[answer_key(verdict)], judged["judge"])
    if judged["judge"]["models_returned"] != models_returned(judged["verdicts"]):
        raise PointsArtifactError("the judge's returned models are not its verdicts'")
    _check_controls(judged["controls"], answered, answers)
    if judged["reliability"] != as_stored(assess(judged["controls"], [p.id for p in answered])):
        raise PointsArtifactError(
            "the reliability is not what the controls give under this harness's rules"
        )
    fields = judge_capabilities(answers, judged["judge"])
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
