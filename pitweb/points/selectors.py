"""Reads for the points pages. Every row a page or export shows comes from here, and
nothing here returns a hidden section, or a hash over one, of a sealed set."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pandas as pd
from django.db.models import Count, Prefetch, QuerySet
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from harness.points.artifacts import typed
from harness.points.demo import DEMO_MODEL
from harness.points.gates import withheld_because
from harness.points.metrics import (
    CLASSES,
    FAIL,
    PASS,
    class_shares,
    harness_error_range,
    rank_ranges,
    wilson,
)
from harness.points.model import Reliability, plain
from harness.points.pitfall_cohort import SuiteSummary, check_together, summarize
from harness.points.pitfall_records import PitfallArtifactError
from harness.points.pitfall_suite import Verified, verify
from harness.points.questions import question_only_points
from harness.points.questions import questions_document as harness_questions_document
from pitweb.core.inputs import read_json
from pitweb.points.models import (
    AnswerSet,
    JudgedSet,
    PitfallArtifact,
    Point,
    PointSet,
    PointsJob,
    Verdict,
)

# a set's name is a slug: anything else (a NUL, a path, a long string) names no set and
# never reaches the database
SET_NAME = re.compile(r"[-a-zA-Z0-9_]{1,100}")


def point_set_named(name: str) -> PointSet | None:
    """The set a page's or the API's path names, or None."""
    if not SET_NAME.fullmatch(name):
        return None
    return PointSet.objects.filter(name=name).first()


def judged_set_of(point_set: PointSet, pk: int) -> JudgedSet | None:
    """One judged set of the set, as its page shows it (its body loaded: the judge's
    controls are read from it), or None."""
    return (
        JudgedSet.objects.filter(pk=pk, answer_set__point_set=point_set)
        .select_related("answer_set", "answer_set__point_set", "previous")
        .defer("answer_set__body", "previous__body", "previous__changes")
        .annotate(usage=KeyTransform("summary", "answer_set__body"))
        .first()
    )


def point_sets() -> QuerySet[PointSet]:
    return PointSet.objects.annotate(point_count=Count("points", distinct=True)).order_by("name")


def point_set_rows(sets: QuerySet[PointSet]) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "title": s.title,
            "kind": s.kind,
            "state": s.state,
            "points": s.point_count,  # type: ignore[attr-defined]
            "reveal_on": s.reveal_on.isoformat() if s.reveal_on else None,
            "commitment": s.commitment or None,
            "suite_sha256": s.suite_sha256 if s.discloses_hidden else None,
            "question_digest": s.question_digest,
            "salt": s.salt if s.state == "revealed" else None,
            "ranked": s.rankable,
        }
        for s in sets
    ]


def public_points(point_set: PointSet) -> QuerySet[Point]:
    """The set's points, with only what its state lets anyone see loaded."""
    points = point_set.points.order_by("position")
    if point_set.discloses_hidden:
        return points
    return points.only(
        "point_set", "point_id", "suite", "position", "question", "question_sha256", "as_of",
        "resolves_on", "rule", "resolved_at",
    )  # fmt: skip


def question_rows(point_set: PointSet) -> list[dict[str, Any]]:
    rows = []
    for p in public_points(point_set):
        row: dict[str, Any] = {
            "point_id": p.point_id,
            "suite": p.suite,
            "question": p.question,
            "question_sha256": p.question_sha256,
        }
        if point_set.discloses_hidden:
            row |= {
                "ground_truth": p.ground_truth,
                "provenance": p.provenance,
                "point_sha256": p.point_sha256,
                "ground_truth_sha256": p.ground_truth_sha256,
            }
        rows.append(row)
    return rows


def questions_document(point_set: PointSet) -> dict[str, Any]:
    """The set's Questions as ``harness.points.questions`` publishes them (never a hidden
    section: the points are read with their Questions alone)."""
    points = question_only_points(point_set.points.values_list("point_id", "question"))
    return harness_questions_document(
        point_set=point_set.name,
        reveal_on=point_set.reveal_on.isoformat() if point_set.reveal_on else "",
        commitment=point_set.commitment,
        points=points,
    )


def received_before_reveal(point_set: PointSet) -> list[AnswerSet]:
    """The answer sets received while the set was sealed, oldest first, each with its log
    entry and the judged sets made of it (``judged_ids``)."""
    found = list(
        point_set.answer_sets.filter(timing=AnswerSet.Timing.BEFORE_REVEAL)
        .select_related("log_entry", "point_set")
        .defer("body", "log_entry__body")
        .order_by("created_at")
    )
    judged: dict[int, list[int]] = {}
    for pk, of in (
        JudgedSet.objects.filter(answer_set__in=found)
        .values_list("pk", "answer_set")
        .order_by("pk")
    ):
        judged.setdefault(of, []).append(pk)
    for answer_set in found:
        answer_set.judged_ids = judged.get(answer_set.pk, [])  # type: ignore[attr-defined]
    return found


def judged_sets(point_set: PointSet) -> list[JudgedSet]:
    """The set's judged sets, each with its judge's ``reliability`` read from its body
    in the query (the body itself is not loaded)."""
    return list(
        JudgedSet.objects.filter(answer_set__point_set=point_set)
        .select_related("answer_set", "answer_set__point_set", "previous")
        .defer("body", "changes", "answer_set__body", "previous__body", "previous__changes")
        .annotate(
            reliability=KeyTransform("reliability", "body"),
            usage=KeyTransform("summary", "answer_set__body"),
        )
        .order_by("answer_set__model", "-created_at")
    )


def judged_label(judged: JudgedSet) -> str:
    return f"{judged.answer_set.model} (judged set {judged.pk})"


def withheld(judged: JudgedSet) -> str | None:
    """Why the set shows no figure (its judge failed its controls), or None."""
    return withheld_because(judged.status, judged.broken_rules)


def shown(judged: list[JudgedSet]) -> list[JudgedSet]:
    """The judged sets whose figures may be drawn or tabled: not a failed judge's."""
    return [j for j in judged if withheld(j) is None]


FIGURES = (
    "pass", "fail", "accuracy", "accuracy_low", "accuracy_high", "accuracy_if_errors_fail",
    "accuracy_if_errors_pass", "pass_at_k", *CLASSES,
)  # fmt: skip


def figures(summary: dict[str, Any]) -> dict[str, Any]:
    """A result's figures, as the harness computed them (the range over harness errors
    from ``harness_error_range``, where there are any); pass@k where its set holds several
    answers per point."""
    low_high = summary.get("accuracy_interval_95") or [None, None]
    passed, failed, errors = (summary.get(k) or 0 for k in ("pass", "fail", "harness_error"))
    resolved = harness_error_range(passed, failed, errors) if errors else None
    passk = summary.get("pass_at_k") or {}
    return {
        "pass": summary.get("pass"),
        "fail": summary.get("fail"),
        "accuracy": summary.get("accuracy"),
        "accuracy_low": low_high[0],
        "accuracy_high": low_high[1],
        "accuracy_if_errors_fail": resolved[0] if resolved else None,
        "accuracy_if_errors_pass": resolved[1] if resolved else None,
        "pass_at_k": {k: v["value"] for k, v in passk.items()} if len(passk) > 1 else None,
        **{c: (summary.get("class_counts") or {}).get(c, 0) for c in CLASSES},
    }


CONTROLS = (
    "control_points", "positive_controls_held", "negative_controls_failed", "flip_rate",
    "fleiss_kappa",
)  # fmt: skip


def controls(reliability: Reliability | None) -> dict[str, Any]:
    """The figures the judge's controls gave (None for imported verdicts: no control ran
    here)."""
    found = reliability.figures if reliability is not None else None
    return {
        "control_points": found.points if found else None,
        "positive_controls_held": found.positive_controls_held if found else None,
        "negative_controls_failed": found.negative_controls_failed if found else None,
        "flip_rate": found.flip_rate if found else None,
        "fleiss_kappa": found.fleiss_kappa if found else None,
    }


def _reliability(judged: JudgedSet) -> Reliability | None:
    """The judge's reliability: annotated by ``judged_sets`` (so the body is not loaded
    once per row), else from the body a single set's page loads anyway."""
    if "reliability" in judged.__dict__:
        found = judged.__dict__["reliability"]
        return typed(found, Reliability) if found else None
    record = judged.record
    return record.reliability if record is not None else None


def judged_rows(judged: list[JudgedSet]) -> list[dict[str, Any]]:
    """One row per judged set. A set whose judge failed its controls has no figure in
    its row, only the rule it broke and what its controls gave."""
    rows = []
    for j in judged:
        because = withheld(j)
        reliability = _reliability(j)
        rows.append(
            {
                "judged_set": j.pk,
                "model": j.answer_set.model,
                "answers": j.answer_set.origin,
                "timing": j.answer_set.timing,
                "judge": f"{j.judge_model}/{j.judge_effort}",
                "judge_pinned": j.judge_pinned,
                "judge_is_demo": j.judge_model == DEMO_MODEL,
                "origin": j.origin,
                "status": j.status,
                "harness_error": j.summary.get("harness_error"),
                **(dict.fromkeys(FIGURES) if because else figures(j.summary)),
                "figures_withheld_because": because or "",
                **controls(reliability),
                **_usage(j),
                "ranked": j.rankable,
                "not_ranked_because": "" if j.rankable else not_ranked_because(j),
            }
        )
    return rows


def _usage(judged: JudgedSet) -> dict[str, Any]:
    """What the answer set measured of its answering: tokens by kind, tool calls (web
    searches among them, as PITFALL's artifacts count them) and cost, where it says."""
    usage = judged.__dict__.get("usage") or {}  # annotated by judged_sets, judged_set_of
    return {
        "tokens": usage.get("tokens") or {},
        "tool_calls": usage.get("tool_calls"),
        "cost_usd": usage.get("cost_usd"),
    }


def with_ranks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ranked rows get their rank range (intervals that overlap share a range)."""
    ranked = [r for r in rows if r["ranked"] and r["accuracy_low"] is not None]
    ranges = rank_ranges([(r["accuracy_low"], r["accuracy_high"]) for r in ranked])
    for row, (best, worst) in zip(ranked, ranges, strict=True):
        row["rank"] = f"{best}" if best == worst else f"{best}-{worst}"
    for row in rows:
        row.setdefault("rank", None)
    return rows


def stability(judged: JudgedSet) -> dict[str, Any] | None:
    """The judge's controls and stability, as its judged set recorded them (None for
    another judge's imported verdicts: nothing of theirs was controlled here)."""
    record = judged.record
    if record is None:
        return None
    reliability, steady = record.reliability, record.controls.stability
    return {
        "status": reliability.status,
        "broken": reliability.broken,
        "rules": plain(reliability.rules),
        "figures": plain(reliability.figures),
        "flip_rate": steady.flip_rate,
        "raw_agreement": steady.raw_agreement,
        "fleiss_kappa": steady.fleiss_kappa,
        "items": steady.items,
        "repeats": steady.repeats,
        "negative_flagged": [n.point_id for n in record.controls.negative if n.flagged],
    }


def not_ranked_because(judged: JudgedSet) -> str:
    """The first reason, the judge's failure before the set's state: a failed judge is
    not ranked wherever its set stands."""
    because = withheld(judged)
    if because:
        return because
    point_set = judged.answer_set.point_set
    if not point_set.rankable:
        return f"the point set is {point_set.state}: only revealed sets are ranked"
    return judged.not_rankable_because or "an unpinned judge"


def class_share_row(judged: JudgedSet) -> dict[str, Any]:
    """A judged set's six classes as the class chart draws them: each count, and each
    share of the judged answers with its Wilson interval (``harness.points.metrics``)."""
    counts = judged.summary.get("class_counts") or {}
    return {
        "judged": sum(counts.get(c, 0) for c in CLASSES),
        **{c: counts.get(c, 0) for c in CLASSES},
        "class_intervals": class_intervals(counts),
    }


def class_intervals(counts: dict[str, int]) -> dict[str, dict[str, float] | None]:
    """``harness.points.metrics.class_shares`` as the charts and the API read it: each
    class's share, low and high (None when nothing was judged)."""
    return {
        c: None if v is None else {"share": v[0], "low": v[1], "high": v[2]}
        for c, v in class_shares(counts).items()
    }


def class_frame(judged: list[JudgedSet]) -> pd.DataFrame:
    """One row per (judged set, class): its count and share of the judged answers."""
    rows = []
    for j in shown(judged):
        counts = j.summary.get("class_counts") or {}
        total = sum(counts.values())
        for c in CLASSES:
            n = counts.get(c, 0)
            rows.append(
                {
                    "label": judged_label(j),
                    "class": c,
                    "count": n,
                    "share": n / total if total else 0.0,
                }
            )
    return pd.DataFrame(rows, columns=["label", "class", "count", "share"])


def suite_rows(judged: list[JudgedSet]) -> list[dict[str, Any]]:
    """Accuracy per suite (folder) for each judged set whose figures may be shown, with
    its Wilson interval."""
    judged = shown(judged)
    wanted = Verdict.objects.filter(judged_set__in=judged).values_list(
        "judged_set", "point__suite", "outcome"
    )
    tally: dict[tuple[int, str], Counter[str]] = {}
    for judged_set, suite, result in wanted:
        tally.setdefault((judged_set, suite or "(root)"), Counter())[result] += 1
    labels = {j.pk: judged_label(j) for j in judged}
    rows = []
    for (judged_set, suite), counts in sorted(tally.items()):
        n = counts[PASS] + counts[FAIL]
        low, high = wilson(counts[PASS], n) if n else (None, None)
        rows.append(
            {
                "judged_set": judged_set,
                "label": labels[judged_set],
                "suite": suite,
                "judged": n,
                "pass": counts[PASS],
                "harness_error": n and sum(counts.values()) - n,
                "accuracy": counts[PASS] / n if n else None,
                "accuracy_low": low,
                "accuracy_high": high,
            }
        )
    return rows


def verdicts(judged: JudgedSet, *, judged_class: str = "", suite: str = "") -> QuerySet[Verdict]:
    # the judged set's id too: the related manager reads it off every verdict it returns
    found = judged.verdicts.select_related("point").only(
        "judged_set",
        "judged_class",
        "outcome",
        "decisive_reason",
        "answer",
        "sample",
        "judge_model",
        "judge_model_returned",
        "judged_at",
        "point__point_id",
        "point__suite",
        "point__position",
    )
    if judged_class == "harness_error":
        found = found.filter(judged_class="")
    elif judged_class:
        found = found.filter(judged_class=judged_class)
    if suite:
        found = found.filter(point__suite=suite)
    return found.order_by("point__position", "sample")


def verdict_rows(judged: JudgedSet, found: QuerySet[Verdict]) -> list[dict[str, Any]]:
    """A verdict's decisive reason may quote the Ground Truth, and a right answer is much
    of it: both are withheld while the set is sealed (the class and outcome are shown)."""
    shows_reason = judged.answer_set.point_set.discloses_hidden
    return [
        {
            "point_id": v.point.point_id,
            "suite": v.point.suite,
            "sample": v.sample,
            "class": v.judged_class or None,
            "outcome": v.outcome,
            "decisive_reason": v.decisive_reason if shows_reason else None,
            "answer": v.answer if shows_reason else None,
            "judge_model": v.judge_model or None,
            "judge_model_returned": v.judge_model_returned or None,
            "judged_at": v.judged_at or None,
        }
        for v in found
    ]


def point_set_with_counts(name: str) -> PointSet | None:
    return PointSet.objects.filter(name=name).prefetch_related(Prefetch("answer_sets")).first()


def job_progress(job: PointsJob) -> dict[str, Any]:
    """What the page polls: the job's state and how far it got."""
    return {
        "job": job.pk,
        "kind": job.kind,
        "state": job.state,
        "done_calls": job.done_calls,
        "total_calls": job.total_calls,
        "attempts": job.attempts,
        "message": job.message,
        "answer_set": job.answer_set_id,
        "judged_set": job.judged_set_id,
    }


def stored_artifacts() -> list[Verified[Any]]:
    """Every stored PITFALL artifact, verified again by the engine (what a page shows of
    them is never taken on trust from the database)."""
    now = timezone.now()
    return [
        verify(read_json(a.raw.encode("utf-8"), a.name), where=a.name, now=now)
        for a in PitfallArtifact.objects.all()
    ]


def pitfall_suites() -> tuple[list[SuiteSummary], list[str]]:
    """What the stored PITFALL artifacts show, suite by suite, and the checks between
    them that held (in words): a page shows this, from artifacts verified again."""
    artifacts = stored_artifacts()
    together = check_together(artifacts)
    if together.failures:  # the import refuses this; say it if the rows were edited
        raise PitfallArtifactError("the stored artifacts", "cohort", str(together.failures[0]))
    return summarize(artifacts), together.held
