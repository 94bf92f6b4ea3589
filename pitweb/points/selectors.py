"""Reads for the points pages. Every row a page or export shows comes from here, and
nothing here returns a hidden section, or a hash over one, of a sealed set."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd
from django.db.models import Count, Prefetch, QuerySet

from harness.points.demo import DEMO_MODEL
from harness.points.metrics import CLASSES, FAIL, PASS, rank_ranges, wilson
from pitweb.points.models import JudgedSet, Point, PointSet, Verdict


def point_sets() -> QuerySet[PointSet]:
    return PointSet.objects.annotate(point_count=Count("points", distinct=True)).order_by("name")


def point_set_rows(sets: QuerySet[PointSet]) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "title": s.title,
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
    return points.only("point_set", "point_id", "suite", "position", "question", "question_sha256")


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


def judged_sets(point_set: PointSet) -> list[JudgedSet]:
    return list(
        JudgedSet.objects.filter(answer_set__point_set=point_set)
        .select_related("answer_set", "answer_set__point_set", "previous")
        .defer("body", "changes", "answer_set__body", "previous__body", "previous__changes")
        .order_by("answer_set__model", "-created_at")
    )


def judged_label(judged: JudgedSet) -> str:
    return f"{judged.answer_set.model} (judged set {judged.pk})"


def judged_rows(judged: list[JudgedSet]) -> list[dict[str, Any]]:
    rows = []
    for j in judged:
        s = j.summary
        low_high = s.get("accuracy_interval_95") or [None, None]
        rows.append(
            {
                "judged_set": j.pk,
                "model": j.answer_set.model,
                "answers": j.answer_set.origin,
                "judge": f"{j.judge_model}/{j.judge_effort}",
                "judge_pinned": j.judge_pinned,
                "judge_is_demo": j.judge_model == DEMO_MODEL,
                "origin": j.origin,
                "status": j.status,
                "pass": s.get("pass"),
                "fail": s.get("fail"),
                "harness_error": s.get("harness_error"),
                "accuracy": s.get("accuracy"),
                "accuracy_low": low_high[0],
                "accuracy_high": low_high[1],
                **{c: (s.get("class_counts") or {}).get(c, 0) for c in CLASSES},
                "ranked": j.rankable,
                "not_ranked_because": "" if j.rankable else _not_ranked(j),
            }
        )
    return rows


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
    if not judged.body:
        return None
    controls, reliability = judged.body["controls"], judged.body["reliability"]
    steady = controls["stability"]
    return {
        "status": reliability["status"],
        "broken": reliability["broken"],
        "rules": reliability["rules"],
        "figures": reliability["figures"],
        "flip_rate": steady["flip_rate"],
        "raw_agreement": steady["raw_agreement"],
        "fleiss_kappa": steady["fleiss_kappa"],
        "items": steady["items"],
        "repeats": steady["repeats"],
        "negative_flagged": [n["point_id"] for n in controls["negative"] if n["flagged"]],
    }


def _not_ranked(judged: JudgedSet) -> str:
    point_set = judged.answer_set.point_set
    if not point_set.rankable:
        return f"the point set is {point_set.state}: only revealed sets are ranked"
    if judged.status == JudgedSet.Status.JUDGE_UNRELIABLE:
        return "judge_unreliable: " + "; ".join(judged.broken_rules)
    return judged.not_rankable_because or "an unpinned judge"


def class_frame(judged: list[JudgedSet]) -> pd.DataFrame:
    """One row per (judged set, class): its count and share of the judged answers."""
    rows = []
    for j in judged:
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
    """Accuracy per suite (folder) for each judged set, with its Wilson interval."""
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
    found = judged.verdicts.select_related("point").only(
        "judged_class",
        "outcome",
        "decisive_reason",
        "answer",
        "sample",
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
        }
        for v in found
    ]


def point_set_with_counts(name: str) -> PointSet | None:
    return PointSet.objects.filter(name=name).prefetch_related(Prefetch("answer_sets")).first()
